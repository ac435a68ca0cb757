# Where an mxk install keeps its config dir, as a function of the install prefix.
# Used at configure time, at install time (install(CODE), where the prefix of
# `cmake --install --prefix` is known) and by the installed package
# (mxkConfig.cmake, which includes this file); libmxk applies the same rule to its
# own location at run time (kernel/plugin/config.c, mxki_config_install_dir).
#
# mxk_install_confdir(<out> <prefix> <sysconfdir>)
#   Sets <out> to "<full sysconfdir>/mxk", where the full sysconfdir follows
#   GNUInstallDirs' CMAKE_INSTALL_FULL_SYSCONFDIR: <sysconfdir> itself when it is
#   absolute; else "/<sysconfdir>" for the prefixes "/" and "/usr" (/etc/mxk);
#   "/<sysconfdir><prefix>" for "/opt/..." (the Filesystem Hierarchy Standard's
#   /etc/opt/<package>; not /opt/homebrew/...); "<prefix>/<sysconfdir>" otherwise
#   (/usr/local/etc/mxk, the build tree's etc/mxk).
function(mxk_install_confdir out prefix sysconfdir)
  string(REGEX REPLACE "(.)/+$" "\\1" prefix "${prefix}")
  if(IS_ABSOLUTE "${sysconfdir}")
    set(dir "${sysconfdir}")
  elseif(prefix MATCHES "^/(usr)?$")
    set(dir "/${sysconfdir}")
  elseif(prefix MATCHES "^/opt/" AND NOT prefix MATCHES "^/opt/homebrew/")
    set(dir "/${sysconfdir}${prefix}")
  else()
    set(dir "${prefix}/${sysconfdir}")
  endif()
  set(${out} "${dir}/mxk" PARENT_SCOPE)
endfunction()

# mxk_install_conf(<subdir> <file>...)
#   Installs the files (relative to the current source dir, or absolute) into the
#   config dir of the prefix given at install time (mxk_install_confdir of
#   `cmake --install --prefix`'s prefix and CMAKE_INSTALL_SYSCONFDIR, "etc" when
#   GNUInstallDirs is not included) + <subdir> ("" or "/plugins.d"). A plugin
#   installed into mxk's own prefix: mxk_install_conf(/plugins.d myop.conf) puts
#   the conf where that mxk looks (/etc/mxk/plugins.d for --prefix /usr).
function(mxk_install_conf subdir)
  set(sysconf "${CMAKE_INSTALL_SYSCONFDIR}")
  if(NOT sysconf)
    set(sysconf etc)
  endif()
  set(files "")
  foreach(f ${ARGN})
    get_filename_component(f "${f}" ABSOLUTE)
    string(APPEND files " \"${f}\"")
  endforeach()
  install(CODE "include(\"${CMAKE_CURRENT_FUNCTION_LIST_FILE}\")
mxk_install_confdir(_mxk_confdir \"\${CMAKE_INSTALL_PREFIX}\" \"${sysconf}\")
file(INSTALL DESTINATION \"\${_mxk_confdir}${subdir}\" TYPE FILE FILES${files})")
endfunction()
