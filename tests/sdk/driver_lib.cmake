# Helpers of the out-of-tree test drivers (cmake -P): tests/sdk/sdk_example.cmake
# and tests/install/install_layout.cmake. They read GENERATOR, MAKE_PROGRAM,
# C_COMPILER and SANITIZE from the including script.
set(app ${CMAKE_CURRENT_LIST_DIR}/app)

# run(<what> <command>...): runs the command; fails the test unless it exits 0.
# Sets OUT (stdout and stderr together) in the caller.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${what} failed (exit ${rc})\n  command: ${cmd}\n--- output:\n${out}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

# expect(<what> <text> <regex>): fails unless <text> matches <regex>.
function(expect what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected to match '${regex}'\n--- got:\n${text}")
  endif()
endfunction()

# expect_has(<what> <text> <needle>) / expect_lacks(...): literal substring checks.
function(expect_has what text needle)
  string(FIND "${text}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${what}: expected to contain '${needle}'\n--- got:\n${text}")
  endif()
endfunction()
function(expect_lacks what text needle)
  string(FIND "${text}" "${needle}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "${what}: must not contain '${needle}'\n--- got:\n${text}")
  endif()
endfunction()

# configure_and_build(<what> <source> <build dir> <mxk_DIR> [extra cmake args...])
function(configure_and_build what src bin mxk_dir)
  set(gen -G "${GENERATOR}")
  if(MAKE_PROGRAM)
    list(APPEND gen "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  run("configuring ${what}" ${CMAKE_COMMAND} -S ${src} -B ${bin} ${gen}
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-Dmxk_DIR=${mxk_dir}" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
    ${ARGN})
  run("building ${what}" ${CMAKE_COMMAND} --build ${bin})
endfunction()

# build_app(<build dir> <mxk_DIR>): the mxk::mxk consumer (tests/sdk/app).
function(build_app bin mxk_dir)
  set(extra)
  if(SANITIZE)
    list(APPEND extra "-DCMAKE_C_FLAGS=-fsanitize=${SANITIZE} -fno-omit-frame-pointer"
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
  endif()
  configure_and_build("the mxk::mxk application" ${app} ${bin} ${mxk_dir} ${extra})
endfunction()

