#ifndef HEARTH_CSPAWN_H
#define HEARTH_CSPAWN_H

#include <spawn.h>

/// Closes every descriptor from `from` up in the child (glibc's
/// posix_spawn_file_actions_addclosefrom_np, 2.34 and later); ENOSYS where there is none.
int cspawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// Changes the child's working directory before it runs the program
/// (posix_spawn_file_actions_addchdir_np: glibc 2.29 and later, macOS); ENOSYS where there is none.
int cspawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path);

#endif
