# Driver of install.layout (tests/install/CMakeLists.txt), run with cmake -P.
# Each failed check ends the script with FATAL_ERROR naming it.
#
# Variables: SOURCE_DIR, BINARY_DIR, WORK, GENERATOR, MAKE_PROGRAM, C_COMPILER,
# SANITIZE, PKG_CONFIG, VERSION, LIBDIR (the project's CMAKE_INSTALL_LIBDIR),
# PLUGINS (comma-separated plugin names), HAVE_MAN (0/1: help2man was found).
cmake_minimum_required(VERSION 3.20)
include(${SOURCE_DIR}/tests/sdk/driver_lib.cmake)

set(root ${WORK}/root)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/home)
run("DESTDIR=${root} cmake --install --prefix /usr" ${CMAKE_COMMAND} -E env DESTDIR=${root}
  ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix /usr)

# expect_files(<what> <path>...): each path exists under the staged root.
function(expect_files what)
  foreach(f ${ARGN})
    if(NOT EXISTS ${root}${f})
      message(FATAL_ERROR "${what}: the install has no ${f} (under ${root})")
    endif()
  endforeach()
endfunction()

# ---- the layout ------------------------------------------------------------------
set(lib /usr/${LIBDIR})
expect_files("config dir (GNUInstallDirs: /etc for --prefix /usr)" /etc/mxk/mxk.conf)
if(EXISTS ${root}/usr/etc)
  message(FATAL_ERROR "the install wrote /usr/etc; the config belongs in /etc/mxk")
endif()
string(REPLACE "," ";" plugins "${PLUGINS}")
foreach(p ${plugins})
  expect_files("plugin ${p}" /etc/mxk/plugins.d/${p}.conf ${lib}/mxk/plugins/libmxk-${p}.so)
endforeach()
expect_files("programs and libraries" /usr/bin/mxk ${lib}/libmxk.so ${lib}/libmxk_train.so)
expect_files("headers" /usr/include/mxk/mxk.h /usr/include/mxk/mxk_recordio.h /usr/include/mxk/mxk_train.h
  /usr/include/mxk/mxk_plugin.h /usr/include/mxk/mxk_sdk.h)
expect_files("CMake package" ${lib}/cmake/mxk/mxkConfig.cmake ${lib}/cmake/mxk/mxkTargets.cmake
  ${lib}/cmake/mxk/mxkInstallDirs.cmake)
expect_files("pkg-config" ${lib}/pkgconfig/mxk.pc ${lib}/pkgconfig/mxk-sdk.pc
  ${lib}/pkgconfig/mxk-train.pc)
expect_files("documentation" /usr/share/doc/mxk/README.md
  /usr/share/doc/mxk/docs/mxnet-compatibility.md /usr/share/doc/mxk/abi/README.md
  /usr/share/doc/mxk/sdk/README.md /usr/share/doc/mxk/plugins/io-recordio/README.md
  /usr/share/doc/mxk/sdk/examples/scaled_tanh/scaled_tanh.c
  /usr/share/doc/mxk/sdk/examples/scaled_tanh/CMakeLists.txt)
expect_files("bash completion" /usr/share/bash-completion/completions/mxk)

# ---- pkg-config: prefix /usr, config dir /etc/mxk, mxk-train requires mxk ------------
file(READ ${root}${lib}/pkgconfig/mxk.pc pc)
expect("mxk.pc" "${pc}" "\nprefix=/usr\n")
expect("mxk.pc" "${pc}" "\nconfdir=/etc/mxk\n")
set(pkgc ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${root}${lib}/pkgconfig
  PKG_CONFIG_SYSROOT_DIR=${root} ${PKG_CONFIG})
run("pkg-config --libs mxk-train" ${pkgc} --libs mxk-train)
expect("pkg-config --libs mxk-train" "${OUT}" "-lmxk_train .*-lmxk")
run("pkg-config --cflags mxk-train" ${pkgc} --cflags mxk-train)
expect_has("pkg-config --cflags mxk-train" "${OUT}" "-I${root}/usr/include/mxk")

# ---- man pages: mxk.1 and one per command of `mxk --help` ----------------------------
set(mxk ${root}/usr/bin/mxk)
set(clean_env ${CMAKE_COMMAND} -E env --unset=MXK_CONFIG_DIR --unset=XDG_CONFIG_HOME
  --unset=MXK_PLUGIN_PATH --unset=MXK_BACKEND --unset=LD_LIBRARY_PATH HOME=${WORK}/home)
run("installed mxk --help" ${clean_env} ${mxk} --help)
string(REGEX MATCH "\nCommands:\n([^\n]+\n)+" commands "${OUT}")
string(REGEX MATCHALL "\n  [a-z]+ " commands "${commands}")
list(TRANSFORM commands STRIP)
list(REMOVE_ITEM commands help)
if(NOT "train" IN_LIST commands)
  message(FATAL_ERROR "no 'train' among the commands of `mxk --help`: '${commands}'")
endif()
if(HAVE_MAN)
  expect_files("man page" /usr/share/man/man1/mxk.1)
  foreach(c ${commands})
    expect_files("man page of `mxk ${c}`" /usr/share/man/man1/mxk-${c}.1)
  endforeach()
  file(READ ${root}/usr/share/man/man1/mxk-train.1 man)
  expect_has("mxk-train.1" "${man}" ".TH MXK-TRAIN \"1\"")
  expect_has("mxk-train.1 (the options of mxk train --help)" "${man}" "\\-\\-num\\-epochs")
  file(READ ${root}/usr/share/man/man1/mxk.1 man)
  expect_has("mxk.1 (SEE ALSO names the command pages)" "${man}" ".BR mxk-train (1),")
else()
  message(STATUS "help2man was not found at build time: no man pages to check")
endif()

# ---- bash completion, driven through bash with the installed mxk ---------------------
# complete(<words>...): COMPREPLY of _mxk for the command line <words> (the last one
# being completed), space-separated, in OUT. (No ';' in the script: CMake lists.)
function(complete)
  string(REPLACE ";" " " words "${ARGN}")
  run("bash completion of '${words}'" ${clean_env} bash --norc --noprofile -c
    ". ${root}/usr/share/bash-completion/completions/mxk
     COMP_WORDS=(${mxk} ${words})
     COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
     _mxk
     echo \"\${COMPREPLY[*]}\"")
  string(STRIP "${OUT}" out)
  set(OUT "${out}" PARENT_SCOPE)
endfunction()
complete(tr)
expect("completion of 'mxk tr'" "${OUT}" "^train$")
complete(--config-dir /tmp sc)
expect("completion of 'mxk --config-dir /tmp sc'" "${OUT}" "^score$")
complete(train --num-e)
expect("completion of 'mxk train --num-e'" "${OUT}" "^--num-embed --num-epochs --num-examples$")
complete(symbol "''")
expect("completion of 'mxk symbol '" "${OUT}" "^dot summary$")
complete(--js)
expect("completion of 'mxk --js'" "${OUT}" "^--json$")
complete(--config-dir ${root}/usr/share/bash-completion/compl)
expect("completion of '--config-dir DIR'" "${OUT}"
  "^${root}/usr/share/bash-completion/completions$")

# ---- installed headers name only installed files (or upstream MXNet sources) --------
# A repository path p is carried when it is a header (/usr/include/mxk/<name>) or a
# document (/usr/share/doc/mxk/<p>, the tree's layout); paths that are not files of
# this repository (upstream MXNet's src/..., python/mxnet/...) are not checked.
file(GLOB headers ${root}/usr/include/mxk/*.h)
foreach(h ${headers})
  file(READ ${h} text)
  string(REGEX MATCHALL "[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+" paths "${text}")
  foreach(p ${paths})
    string(REGEX REPLACE "[.,;:)]+$" "" p "${p}")
    get_filename_component(n ${p} NAME)
    if(EXISTS ${SOURCE_DIR}/${p} AND NOT IS_DIRECTORY ${SOURCE_DIR}/${p}
       AND NOT EXISTS ${root}/usr/include/mxk/${n} AND NOT EXISTS ${root}/usr/share/doc/mxk/${p})
      message(FATAL_ERROR "${h} refers to ${p}, which the install does not carry")
    endif()
  endforeach()
endforeach()

# ---- an application against the staged package: find_package(mxk) -> mxk::train ----
build_app(${WORK}/app ${root}${lib}/cmake/mxk)
run("the application (staged /usr install)" ${clean_env} ${WORK}/app/mxk_sdk_app
  ${root}/etc/mxk)
expect_has("application output" "${OUT}" "version ${VERSION}\n")
expect_has("application output (mxk::train)" "${OUT}" "checkpoint ck/mlp-0003.params\n")
expect_lacks("application output" "${OUT}" "rejected")
foreach(p ${plugins})
  expect_has("application output (the staged plugins, found from libmxk)" "${OUT}"
    "plugin ${p}\n")
endforeach()
# ---- a plugin installed into the same prefix: its conf joins /etc/mxk/plugins.d ------
configure_and_build("the scaled_tanh example (staged package)" ${SOURCE_DIR}/sdk/examples/scaled_tanh
  ${WORK}/example ${root}${lib}/cmake/mxk)
run("DESTDIR=${root} cmake --install <example> --prefix /usr" ${CMAKE_COMMAND} -E env
  DESTDIR=${root} ${CMAKE_COMMAND} --install ${WORK}/example --prefix /usr)
expect_files("the example's install (mxk_install_conf)" /etc/mxk/plugins.d/scaled_tanh.conf
  ${lib}/mxk/plugins/libscaled_tanh.so)
message(STATUS "install for /usr staged and checked in ${root}")
