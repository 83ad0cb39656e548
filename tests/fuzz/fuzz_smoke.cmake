# gpuscale_fuzz_smoke_test(TARGET [SECONDS s] [ARGS libFuzzer flags...]): registers a ctest (label
# "fuzz") that runs the libFuzzer target TARGET for a short while over its seed corpus in
# tests/fuzz/corpus/TARGET (ARGS, e.g. -max_len=65536 for inputs as long as a server's limits). New inputs go to a
# scratch directory in the build tree, so the seed corpus in the source tree is left as it is. Undefined
# behaviour stops the run like a crash (UBSan only reports it otherwise). The entropic power schedule is
# off: with the whole library instrumented, its per-input bookkeeping took four fifths of the time
# (tens of inputs per second instead of hundreds).
include_guard(GLOBAL)

function(gpuscale_fuzz_smoke_test target)
  cmake_parse_arguments(ARG "" "SECONDS" "ARGS" ${ARGN})
  if(NOT ARG_SECONDS)
    set(ARG_SECONDS 10)
  endif()
  set(scratch ${CMAKE_BINARY_DIR}/fuzz/${target}_corpus)
  file(MAKE_DIRECTORY ${scratch})
  add_test(NAME ${target}_smoke
           COMMAND ${target} -max_total_time=${ARG_SECONDS} -timeout=10 -entropic=0 ${ARG_ARGS} ${scratch}
                   ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${target})
  math(EXPR timeout "${ARG_SECONDS} * 3 + 30")
  set_tests_properties(${target}_smoke PROPERTIES LABELS fuzz TIMEOUT ${timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
endfunction()
