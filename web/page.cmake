# SPDX-License-Identifier: MIT
# evprof's page (evprof view, .html outputs): web/ holds its sources and an
# npm lock of the libraries it embeds; web/embed.cmake turns them into
# page_assets.c (EVPROF_PAGE_C), compiled with the library's formats. Without
# node and npm (or with -DEVPROF_WITH_PAGE=OFF) the library gets empty assets
# and its page writer answers -ENOTSUP, which evprof view reports.
set(EVPROF_PAGE_C ${PROJECT_BINARY_DIR}/page_assets.c)
if(EVPROF_WITH_PAGE)
  find_program(EVPROF_NODE node)
  find_program(EVPROF_NPM npm)
endif()
if(EVPROF_WITH_PAGE AND EVPROF_NODE AND EVPROF_NPM)
  message(STATUS "page: embedded (web/, ${EVPROF_NPM})")
  add_custom_command(OUTPUT ${EVPROF_PAGE_C}
    COMMAND ${CMAKE_COMMAND} -DWEB=${PROJECT_SOURCE_DIR}/web
      -DOUT=${EVPROF_PAGE_C} -DNPM=${EVPROF_NPM}
      -P ${PROJECT_SOURCE_DIR}/web/embed.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/web/embed.cmake
      ${PROJECT_SOURCE_DIR}/web/index.html ${PROJECT_SOURCE_DIR}/web/app.js
      ${PROJECT_SOURCE_DIR}/web/app.css ${PROJECT_SOURCE_DIR}/web/package-lock.json
    COMMENT "Embedding the page (web/)" VERBATIM)
else()
  message(STATUS "page: not embedded (node/npm missing or EVPROF_WITH_PAGE=OFF): "
    "evprof view and .html outputs are disabled")
  file(WRITE ${EVPROF_PAGE_C}.in "/* No page: built without node/npm. */\n"
    "#include \"page_assets.h\"\nconst char evprof__page_html[] = \"\";\n"
    "const char evprof__page_css[] = \"\";\n"
    "const char evprof__page_js[] = \"\";\n")
  configure_file(${EVPROF_PAGE_C}.in ${EVPROF_PAGE_C} COPYONLY)
endif()
