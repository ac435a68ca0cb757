# Driver of the SDK's out-of-tree tests (tests/sdk/CMakeLists.txt), run with
# `cmake -D... -P sdk_example.cmake`. Each failed step ends the script with
# FATAL_ERROR (a failed test) naming the step, the command and its output.
#
# MODE=build    builds sdk/examples/scaled_tanh and tests/sdk/app out of tree
#               against the BUILD tree's package (-Dmxk_DIR=<build>/lib/cmake/mxk),
#               checks the flags the package gave the plugin, and writes
#               WORK/conf/plugins.d/{scaled_tanh,cpu-blas}.conf pointing at the
#               built libraries (for test_sdk_scaled_tanh, a fixture).
# MODE=install  installs the whole project into WORK/prefix (cmake --install
#               --prefix), builds the example and the app against the INSTALLED
#               package, runs the installed `mxk plugins` with a config dir holding
#               the example's own scaled_tanh.conf and with the install's default
#               config dir, and checks mxk.pc / mxk-sdk.pc with pkg-config.
#
# Variables: MODE, SOURCE_DIR, BINARY_DIR, WORK, GENERATOR, MAKE_PROGRAM,
# C_COMPILER, SANITIZE (the project's MXK_SANITIZE), HAVE_CPU_BLAS (0/1),
# CPU_BLAS_LIB (built cpu-blas plugin, MODE=build), PKG_CONFIG, VERSION,
# LIBDIR, INCLUDEDIR, BINDIR, SYSCONFDIR (the project's CMAKE_INSTALL_*DIR).
cmake_minimum_required(VERSION 3.20)

foreach(v MODE SOURCE_DIR BINARY_DIR WORK GENERATOR C_COMPILER HAVE_CPU_BLAS VERSION LIBDIR
        INCLUDEDIR BINDIR SYSCONFDIR)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "sdk_example.cmake: -D${v}=... is required")
  endif()
endforeach()

set(example ${SOURCE_DIR}/sdk/examples/scaled_tanh)
include(${CMAKE_CURRENT_LIST_DIR}/driver_lib.cmake)

# build_example(<build dir> <mxk_DIR>): the example, with the package's include
# dirs as plain -I (not -isystem) so that -Werror also covers the SDK headers.
# Returns the compile command in COMPILE and checks the plugin was built.
function(build_example bin mxk_dir)
  configure_and_build("the scaled_tanh example" ${example} ${bin} ${mxk_dir}
    -DCMAKE_NO_SYSTEM_FROM_IMPORTED=ON -DSCALED_TANH_WERROR=ON)
  if(NOT EXISTS ${bin}/libscaled_tanh.so)
    message(FATAL_ERROR "the example build produced no ${bin}/libscaled_tanh.so")
  endif()
  file(READ ${bin}/compile_commands.json cc)
  # What mxk_add_plugin_library promises: C11, hidden visibility, PIC.
  expect_has("example compile flags" "${cc}" "-std=c11")
  expect_has("example compile flags" "${cc}" "-fvisibility=hidden")
  expect_has("example compile flags" "${cc}" "-fPIC")
  expect_has("example compile flags" "${cc}" "-Werror")
  set(COMPILE "${cc}" PARENT_SCOPE)
endfunction()

# The environment of programs under test: no user or CI configuration leaks in.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/home ${WORK}/conf/plugins.d)
set(clean_env ${CMAKE_COMMAND} -E env --unset=MXK_CONFIG_DIR --unset=XDG_CONFIG_HOME
  --unset=MXK_PLUGIN_PATH --unset=MXK_BACKEND --unset=LD_LIBRARY_PATH HOME=${WORK}/home)

if(MODE STREQUAL "build")
  # ---- against the build tree's package -------------------------------------------
  set(mxk_dir ${BINARY_DIR}/${LIBDIR}/cmake/mxk)
  build_example(${WORK}/example ${mxk_dir})
  expect_has("example include dirs (build tree)" "${COMPILE}" "-I${SOURCE_DIR}/abi")
  expect_has("example include dirs (build tree)" "${COMPILE}" "-I${SOURCE_DIR}/sdk/include")
  expect_lacks("example include dirs (plugins do not see mxk.h)" "${COMPILE}"
    "${SOURCE_DIR}/kernel/include")

  file(WRITE ${WORK}/conf/plugins.d/scaled_tanh.conf
    "# written by tests/sdk/sdk_example.cmake\n[plugin]\nlibrary = ${WORK}/example/libscaled_tanh.so\nenabled = true\n")
  if(HAVE_CPU_BLAS)
    file(WRITE ${WORK}/conf/plugins.d/cpu-blas.conf
      "# written by tests/sdk/sdk_example.cmake\n[plugin]\nlibrary = ${CPU_BLAS_LIB}\n")
  endif()

  build_app(${WORK}/app ${mxk_dir})
  run("the application (build tree)" ${clean_env} ${WORK}/app/mxk_sdk_app ${WORK}/conf)
  expect_has("application output" "${OUT}" "version ${VERSION}\n")
  expect_has("application output (mxk::train)" "${OUT}" "checkpoint ck/mlp-0003.params\n")
  expect_has("application output" "${OUT}" "plugin scaled_tanh\n")
  expect_lacks("application output" "${OUT}" "rejected")
  if(HAVE_CPU_BLAS)
    expect("application output" "${OUT}" "ScaledTanh\\(1\\) = (1\\.0000|0\\.9999)[0-9]+\n")
  endif()
  message(STATUS "sdk example built against the build tree; config dir ${WORK}/conf")

elseif(MODE STREQUAL "install")
  # ---- install, then against the installed package ----------------------------------
  set(prefix ${WORK}/prefix)
  run("cmake --install" ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
  file(REAL_PATH ${prefix} real_prefix)
  foreach(f ${LIBDIR}/cmake/mxk/mxkConfig.cmake ${LIBDIR}/cmake/mxk/mxkConfigVersion.cmake
            ${LIBDIR}/cmake/mxk/mxkTargets.cmake ${LIBDIR}/pkgconfig/mxk.pc
            ${LIBDIR}/pkgconfig/mxk-sdk.pc ${INCLUDEDIR}/mxk/mxk.h ${INCLUDEDIR}/mxk/mxk_plugin.h
            ${INCLUDEDIR}/mxk/mxk_sdk.h ${INCLUDEDIR}/mxk/mxk_sdk_req.h ${LIBDIR}/libmxk.so
            ${BINDIR}/mxk ${SYSCONFDIR}/mxk/mxk.conf)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "cmake --install did not install ${prefix}/${f}")
    endif()
  endforeach()
  # The installed package must not point back into the source tree.
  foreach(f ${LIBDIR}/cmake/mxk/mxkTargets.cmake ${LIBDIR}/cmake/mxk/mxkConfig.cmake
            ${LIBDIR}/pkgconfig/mxk.pc ${LIBDIR}/pkgconfig/mxk-sdk.pc)
    file(READ ${prefix}/${f} text)
    foreach(d abi sdk/include kernel/include)
      expect_lacks("installed ${f}" "${text}" "${SOURCE_DIR}/${d}")
    endforeach()
  endforeach()

  set(mxk_dir ${prefix}/${LIBDIR}/cmake/mxk)
  build_example(${WORK}/example ${mxk_dir})
  expect_has("example include dirs (install)" "${COMPILE}" "-I${prefix}/${INCLUDEDIR}/mxk")
  expect_lacks("example include dirs (install)" "${COMPILE}" "${SOURCE_DIR}/abi")

  # A config dir with the example's own conf (relative `library`, resolved next to
  # the conf) and, with cpu-blas, a conf whose relative library is only found in
  # the install's plugin folder (located from libmxk's own path).
  file(COPY ${example}/scaled_tanh.conf ${WORK}/example/libscaled_tanh.so
    DESTINATION ${WORK}/conf/plugins.d)
  file(REAL_PATH ${WORK}/conf real_conf)
  if(HAVE_CPU_BLAS)
    file(WRITE ${WORK}/conf/plugins.d/cpu-blas.conf
      "# written by tests/sdk/sdk_example.cmake\n[plugin]\nlibrary = libmxk-cpu-blas.so\n")
  endif()
  set(mxk ${prefix}/${BINDIR}/mxk)
  run("installed mxk plugins --config-dir" ${clean_env} ${mxk} plugins --config-dir ${WORK}/conf)
  set(what "installed `mxk plugins --config-dir ${WORK}/conf`")
  expect_has("${what}" "${OUT}" "scaled_tanh 0.1.0")
  expect_has("${what}" "${OUT}" "ScaledTanh")
  expect_has("${what}" "${OUT}" "${real_conf}/plugins.d/libscaled_tanh.so")
  expect_lacks("${what}" "${OUT}" "rejected")
  if(HAVE_CPU_BLAS)
    expect_has("${what}" "${OUT}" "${real_prefix}/${LIBDIR}/mxk/plugins/libmxk-cpu-blas.so")
  endif()

  # The install's default config dir, found from libmxk's location.
  run("installed mxk plugins" ${clean_env} ${mxk} plugins)
  set(what "installed `mxk plugins` (default config)")
  string(REGEX MATCH "[Cc]onfig dir: *([^\n]*)" line "${OUT}")
  if(NOT CMAKE_MATCH_1 STREQUAL "${real_prefix}/${SYSCONFDIR}/mxk")
    message(FATAL_ERROR "${what}: config dir '${CMAKE_MATCH_1}', expected "
      "'${real_prefix}/${SYSCONFDIR}/mxk'\n--- got:\n${OUT}")
  endif()
  expect_lacks("${what}" "${OUT}" "${BINARY_DIR}/${LIBDIR}/mxk")
  expect_lacks("${what}" "${OUT}" "rejected")
  if(HAVE_CPU_BLAS)
    expect_has("${what}" "${OUT}" "cpu-blas 0.1.0")
    expect_has("${what}" "${OUT}" "${real_prefix}/${LIBDIR}/mxk/plugins/libmxk-cpu-blas.so")
  endif()

  # pkg-config: mxk-sdk (flags only) and mxk (flags + -lmxk) name the install.
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "no pkg-config program given (-DPKG_CONFIG=...)")
  endif()
  set(pc ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig ${PKG_CONFIG})
  run("pkg-config --cflags mxk-sdk" ${pc} --cflags mxk-sdk)
  string(STRIP "${OUT}" sdk_cflags)
  if(NOT sdk_cflags STREQUAL "-I${prefix}/${INCLUDEDIR}/mxk")
    message(FATAL_ERROR "pkg-config --cflags mxk-sdk: got '${sdk_cflags}', "
      "expected '-I${prefix}/${INCLUDEDIR}/mxk'")
  endif()
  run("pkg-config --libs mxk-sdk" ${pc} --libs mxk-sdk)
  expect_lacks("pkg-config --libs mxk-sdk (plugins never link libmxk)" "${OUT}" "-lmxk")
  run("pkg-config --cflags --libs mxk" ${pc} --cflags --libs mxk)
  string(STRIP "${OUT}" mxk_flags)
  expect_has("pkg-config --cflags --libs mxk" "${mxk_flags}" "-I${prefix}/${INCLUDEDIR}/mxk")
  expect_has("pkg-config --cflags --libs mxk" "${mxk_flags}" "-L${prefix}/${LIBDIR}")
  expect_has("pkg-config --cflags --libs mxk" "${mxk_flags}" "-lmxk")
  run("pkg-config --variable=plugindir mxk-sdk" ${pc} --variable=plugindir mxk-sdk)
  string(STRIP "${OUT}" plugindir)
  if(NOT plugindir STREQUAL "${prefix}/${LIBDIR}/mxk/plugins")
    message(FATAL_ERROR "pkg-config --variable=plugindir mxk-sdk: got '${plugindir}'")
  endif()
  # The pkg-config flags alone compile a plugin.
  separate_arguments(sdk_cflags_list UNIX_COMMAND "${sdk_cflags}")
  run("compiling the example with pkg-config's mxk-sdk flags" ${C_COMPILER} -std=c11 -Wall
    -Wextra -Wno-unused-parameter -Werror -fPIC -fvisibility=hidden ${sdk_cflags_list}
    -c ${example}/scaled_tanh.c -o ${WORK}/scaled_tanh_pc.o)

  # An application against the installed mxk::mxk.
  build_app(${WORK}/app ${mxk_dir})
  run("the application (install)" ${clean_env} ${WORK}/app/mxk_sdk_app ${WORK}/conf)
  expect_has("application output" "${OUT}" "version ${VERSION}\n")
  expect_has("application output (mxk::train)" "${OUT}" "checkpoint ck/mlp-0003.params\n")
  expect_has("application output" "${OUT}" "plugin scaled_tanh\n")
  expect_lacks("application output" "${OUT}" "rejected")
  if(HAVE_CPU_BLAS)
    expect("application output" "${OUT}" "ScaledTanh\\(1\\) = (1\\.0000|0\\.9999)[0-9]+\n")
  endif()
  run("the application (install, default config)" ${clean_env} ${WORK}/app/mxk_sdk_app)
  expect_has("application output" "${OUT}" "config_dir ${real_prefix}/${SYSCONFDIR}/mxk\n")
  message(STATUS "sdk example built and loaded against the install in ${prefix}")

else()
  message(FATAL_ERROR "sdk_example.cmake: MODE must be 'build' or 'install', got '${MODE}'")
endif()
