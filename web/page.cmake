# SPDX-License-Identifier: MIT
# evprof's page (evprof view, .html outputs): web/ holds its sources and an
# npm lock of the libraries it embeds; web/embed.cmake turns them into
# page_assets.c, compiled into libevprof. Without node and npm (or with
# -DEVPROF_PAGE=OFF) the library gets empty assets and its page writer
# answers -ENOTSUP, which evprof view reports.
option(EVPROF_PAGE "Embed the page of evprof view (needs node and npm)" ON)
set(EVPROF_PAGE_C ${CMAKE_BINARY_DIR}/page_assets.c)
if(EVPROF_PAGE)
  find_program(EVPROF_NODE node)
  find_program(EVPROF_NPM npm)
endif()
if(EVPROF_PAGE AND EVPROF_NODE AND EVPROF_NPM)
  message(STATUS "page: embedded (web/, ${EVPROF_NPM})")
  add_custom_command(OUTPUT ${EVPROF_PAGE_C}
    COMMAND ${CMAKE_COMMAND} -DWEB=${CMAKE_SOURCE_DIR}/web
      -DOUT=${EVPROF_PAGE_C} -DNPM=${EVPROF_NPM}
      -P ${CMAKE_SOURCE_DIR}/web/embed.cmake
    DEPENDS ${CMAKE_SOURCE_DIR}/web/embed.cmake
      ${CMAKE_SOURCE_DIR}/web/index.html ${CMAKE_SOURCE_DIR}/web/app.js
      ${CMAKE_SOURCE_DIR}/web/app.css ${CMAKE_SOURCE_DIR}/web/package-lock.json
    COMMENT "Embedding the page (web/)" VERBATIM)
else()
  message(STATUS "page: not embedded (node/npm missing or EVPROF_PAGE=OFF): "
    "evprof view and .html outputs are disabled")
  file(WRITE ${EVPROF_PAGE_C}.in "/* No page: built without node/npm. */\n"
    "#include \"page_assets.h\"\nconst char evprof__page_html[] = \"\";\n"
    "const char evprof__page_css[] = \"\";\n"
    "const char evprof__page_js[] = \"\";\n")
  configure_file(${EVPROF_PAGE_C}.in ${EVPROF_PAGE_C} COPYONLY)
endif()
target_sources(evprof_obj PRIVATE ${EVPROF_PAGE_C})
set_source_files_properties(${EVPROF_PAGE_C} PROPERTIES
  INCLUDE_DIRECTORIES ${CMAKE_SOURCE_DIR}/src/lib)
