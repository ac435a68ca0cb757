# Where an mxk install keeps its config dir, as a function of the install prefix.
# Used at configure time, at install time (install(CODE), where the prefix of
# `cmake --install --prefix` is known) and by the installed package
# (mxkConfig.cmake); libmxk applies the same rule to its own location at run time
# (kernel/plugin/config.c, mxk_config_install_dir).
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
