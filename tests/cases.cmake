# Run by CTest (a TEST_INCLUDE_FILES of tests/) for each cmocka program:
# asks the built program for its cases (--list) and adds one test per
# case, PREFIX/CASE, running `PROGRAM CASE` (see tests/cases.h). The list
# is the program's own, taken when CTest starts: a case added or renamed
# is a test at the next run, never a name that matches nothing.
# A program that is not built or cannot list its cases is one failing test;
# one that exits 77 before its cases (nothing of it can run here), one skip.
# The failing command has no ; (a CMake list would split it there).
set(fail_cmd /bin/sh -c "echo \"$1\" >&2 && false" -)
if(NOT EXISTS "${PROGRAM}")
  add_test("${PREFIX}" ${fail_cmd} "${PROGRAM} is not built")
  set_tests_properties("${PREFIX}" PROPERTIES LABELS "${LABEL}")
  return()
endif()
execute_process(COMMAND "${PROGRAM}" --list
  OUTPUT_VARIABLE cases ERROR_VARIABLE err RESULT_VARIABLE rc)
string(STRIP "${cases}" cases)
string(REPLACE ";" "," err "${err}")
if(rc EQUAL 77)
  # The whole program cannot run here: one test, skipped with its reason.
  add_test("${PREFIX}" "${PROGRAM}" --list)
  set_tests_properties("${PREFIX}" PROPERTIES LABELS "${LABEL}"
    SKIP_RETURN_CODE 77)
  return()
endif()
if(NOT rc EQUAL 0 OR cases STREQUAL "")
  add_test("${PREFIX}" ${fail_cmd}
    "${PROGRAM} --list gave no cases (exit ${rc}): ${err}")
  set_tests_properties("${PREFIX}" PROPERTIES LABELS "${LABEL}")
  return()
endif()
string(REPLACE "\n" ";" cases "${cases}")
foreach(case IN LISTS cases)
  add_test("${PREFIX}/${case}" "${PROGRAM}" "${case}")
  set_tests_properties("${PREFIX}/${case}" PROPERTIES LABELS "${LABEL}"
    SKIP_RETURN_CODE 77 TIMEOUT 300 WORKING_DIRECTORY "${WORKDIR}")
endforeach()
