// The spawn file actions that Swift's Glibc module does not show (they need _GNU_SOURCE).
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>

#include "CSpawn.h"

int cspawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions;
    (void)from;
    return ENOSYS;
#endif
}

int cspawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
#if defined(__APPLE__) || (defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29)))
    return posix_spawn_file_actions_addchdir_np(actions, path);
#else
    (void)actions;
    (void)path;
    return ENOSYS;
#endif
}
