"""A lock holder in another process, taking its locks the way Murano's
engine does: python3 peer.py KIND PATH, then one command a line on stdin,
one answer a line on stdout.

KIND is how the locks are taken:
  lockf      fcntl.lockf over the whole file (exclusive on open(path, "a"),
             shared on open(path, "r"))
  fasteners  fasteners.InterProcessLock (exclusive) and the read lock of
             fasteners.InterProcessReaderWriterLock (shared)
  murano     murano.utils.ExclusiveInterProcessLock (oslo.concurrency) and
             murano.utils.SharedInterProcessLock, the engine's own classes

Commands:
  lock sh|ex   take the lock, waiting; answers "locked"
  try sh|ex    take it without waiting; answers "locked" or "busy"
  unlock       release it; answers "unlocked"
  remove       os.remove(PATH), as the engine's cache cleanup does after
               releasing; answers "removed"
  move DEST    os.rename(PATH, DEST); answers "moved"
"""
import fcntl
import os
import sys

kind, path = sys.argv[1], sys.argv[2]


class Lockf:
    def __init__(self, exclusive):
        self.exclusive = exclusive
        self.f = None

    def acquire(self, blocking):
        self.f = open(path, "a" if self.exclusive else "r")
        flags = fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH
        if not blocking:
            flags |= fcntl.LOCK_NB
        try:
            fcntl.lockf(self.f, flags)
        except OSError:
            self.f.close()
            return False
        return True

    def release(self):
        fcntl.lockf(self.f, fcntl.LOCK_UN)
        self.f.close()


class Fasteners:
    def __init__(self, exclusive):
        import fasteners
        self.exclusive = exclusive
        if exclusive:
            self.lock = fasteners.InterProcessLock(path)
        else:
            self.lock = fasteners.InterProcessReaderWriterLock(path)

    def acquire(self, blocking):
        if self.exclusive:
            return self.lock.acquire(blocking=blocking)
        return self.lock.acquire_read_lock(blocking=blocking)

    def release(self):
        if self.exclusive:
            self.lock.release()
        else:
            self.lock.release_read_lock()


class Murano:
    def __init__(self, exclusive):
        import murano.common.config  # noqa: F401 (registers the options)
        from murano import utils
        cls = utils.ExclusiveInterProcessLock if exclusive else utils.SharedInterProcessLock
        self.lock = cls(path=path)

    def acquire(self, blocking):
        return self.lock.acquire(blocking=blocking)

    def release(self):
        self.lock.release()


kinds = {"lockf": Lockf, "fasteners": Fasteners, "murano": Murano}
held = None
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] in ("lock", "try"):
        lock = kinds[kind](cmd[1] == "ex")
        if lock.acquire(cmd[0] == "lock"):
            held = lock
            print("locked", flush=True)
        else:
            print("busy", flush=True)
    elif cmd[0] == "unlock":
        held.release()
        held = None
        print("unlocked", flush=True)
    elif cmd[0] == "remove":
        os.remove(path)
        print("removed", flush=True)
    elif cmd[0] == "move":
        os.rename(path, cmd[1])
        print("moved", flush=True)
    else:
        print("unknown command", cmd, flush=True)
