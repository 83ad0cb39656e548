# Helpers shared by every module's CMakeLists.txt.

# add_subdirectory() for each direct child of DIR that has a CMakeLists.txt, in name order.
function(gpuscale_add_subdirectories dir)
  file(GLOB children LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/${dir}/*)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${child} AND EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()

# gpuscale_module_include_dir(MODULE OUT): an include root that holds only include/gpuscale/MODULE
# (a symbolic link under the build tree), so that a target sees the headers of the modules it links
# and no others: `#include "gpuscale/<module>/x.h"` of a module not linked fails to compile.
function(gpuscale_module_include_dir module out)
  set(root ${CMAKE_BINARY_DIR}/module-include/${module})
  if(NOT EXISTS ${root}/gpuscale/${module})
    file(MAKE_DIRECTORY ${root}/gpuscale)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/include/gpuscale/${module} ${root}/gpuscale/${module} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# gpuscale_unity(TARGET): with GPUSCALE_UNITY_BUILD, TARGET's sources compile in batches of eight, each
# batch one translation unit, so the heavy headers (Boost.Beast, cpprestsdk, nlohmann-json) are parsed
# and their templates instantiated once per batch rather than once per file. Names at file scope
# (anonymous namespaces included) must therefore be unique across the target's sources. Test programs
# are not batched: their files reuse fixture names (Row, kNow, ...) on purpose. GCC reads every file
# of a batch as a header of the batch's file, so it would flag each class with external linkage
# (a pimpl's Impl) that holds a type of its source's anonymous namespace: a false alarm there.
function(gpuscale_unity target)
  if(GPUSCALE_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()

# gpuscale_library(NAME [MODULE m] SOURCES ... DEPS ...): a static library of lib/<m> whose public
# headers are include/gpuscale/<m> (m defaults to NAME without its gpuscale_ prefix). DEPS are
# public: a target that links the library sees its headers and those of the libraries it uses.
function(gpuscale_library name)
  cmake_parse_arguments(ARG "" "MODULE" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_MODULE)
    string(REGEX REPLACE "^gpuscale_" "" ARG_MODULE ${name})
  endif()
  gpuscale_module_include_dir(${ARG_MODULE} public_headers)
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${public_headers} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  gpuscale_unity(${name})
  set_property(GLOBAL APPEND PROPERTY GPUSCALE_LIBRARIES "${ARG_MODULE}:${name}")
endfunction()

# gpuscale_write_module_links(FILE): after every library is added, writes FILE with one line per
# library, "MODULE TARGET LINKS...", LINKS being the target's own link list as the build has it
# (tests/integration/architecture compares it with docs/architecture.md's module table).
function(gpuscale_write_module_links file)
  get_property(libraries GLOBAL PROPERTY GPUSCALE_LIBRARIES)
  set(content "")
  foreach(entry ${libraries})
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 module)
    list(GET parts 1 target)
    string(APPEND content "${module} ${target} $<JOIN:$<TARGET_PROPERTY:${target},LINK_LIBRARIES>, >\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${content}")
endfunction()

# gpuscale_register_test(NAME LABELS TIMEOUT ENV COMMAND...): add_test(NAME COMMAND...) with its
# labels (a list), its timeout and the environment every test gets (GPUSCALE_SOURCE_DIR,
# GPUSCALE_BINARY_DIR) plus ENV (a list of "KEY=value", may be empty).
function(gpuscale_register_test name labels timeout env)
  add_test(NAME ${name} COMMAND ${ARGN})
  set(environment GPUSCALE_SOURCE_DIR=${CMAKE_SOURCE_DIR} GPUSCALE_BINARY_DIR=${CMAKE_BINARY_DIR})
  list(APPEND environment ${env})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout}
                       ENVIRONMENT "${environment}")
endfunction()

# gpuscale_program(NAME): what every shipped program gets. It looks for shared libraries first in
# lib/ beside its bin/ ($ORIGIN/../lib: the release tarball's layout, scripts/release.sh), then where
# the system keeps them (an image, a Debian host). DT_RPATH rather than DT_RUNPATH, because only
# DT_RPATH also serves the libraries' own dependencies (libcpprest's libssl, ...). In a build tree
# and in the images that folder holds no shared library.
function(gpuscale_program name)
  gpuscale_unity(${name})
  set_target_properties(${name} PROPERTIES BUILD_RPATH "$ORIGIN/../lib")
  target_link_options(${name} PRIVATE -Wl,--disable-new-dtags)
endfunction()

# gpuscale_test(NAME SOURCES ... DEPS ... [LABEL unit|integration|e2e] [TIMEOUT s]):
# a GoogleTest program registered with ctest under LABEL (default unit).
function(gpuscale_test name)
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gpuscale_register_test(${name} "${ARG_LABEL}" ${ARG_TIMEOUT} "" ${name})
endfunction()

# gpuscale_test_variant(NAME VARIANT ENV...): runs the test program of gpuscale_test(NAME) again as the
# test NAME_VARIANT, with the same label and timeout and the extra environment ENV ("KEY=value"
# entries), e.g. against another backend of the test matrix.
function(gpuscale_test_variant name variant)
  get_test_property(${name} LABELS labels)
  get_test_property(${name} TIMEOUT timeout)
  gpuscale_register_test(${name}_${variant} "${labels}" ${timeout} "${ARGN}" ${name})
endfunction()

# gpuscale_script_test(NAME SCRIPT [ARGS ...] [LABEL l] [TIMEOUT s] [SERIAL] [LOCKS name ...]): a
# shell-driven test (exit 77 = skipped). End-to-end tests each run their own control plane on free
# ports and in their own directory, so two may run side by side (ctest -j 2); SERIAL runs one alone
# (its checks depend on timing, or it loads both cores), LOCKS names machine-wide resources it must
# not share (e.g. real_node: one real kubelet node per machine). LABEL may name several (`LABEL e2e
# go-extra` for a test of the extra Go parts, which scripts/test.sh runs last).
function(gpuscale_script_test name)
  cmake_parse_arguments(ARG "SERIAL" "SCRIPT;TIMEOUT" "ARGS;LOCKS;LABEL" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL integration)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  gpuscale_register_test(${name} "${ARG_LABEL}" ${ARG_TIMEOUT} "" bash ${ARG_SCRIPT} ${ARG_ARGS})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  if(ARG_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(ARG_LOCKS)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK "${ARG_LOCKS}")
  endif()
endfunction()

# gpuscale_fuzzer(NAME SOURCES ... DEPS ...): a libFuzzer target (clang, GPUSCALE_FUZZ=ON).
function(gpuscale_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  if(NOT TARGET fuzzers)
    add_custom_target(fuzzers)
  endif()
  add_dependencies(fuzzers ${name})
endfunction()
