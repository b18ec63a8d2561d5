"""murano-engine's package cache, driven line by line: Murano 14's own
ApiPackageLoader (murano/engine/package_loader.py, from Debian's
python3-murano) with only its API client replaced by a stand-in that
serves zip files from disk. Each loader is one deployment, as the engine
makes one per deployment; load_package takes the usage lock (shared, held
until the deployment ends), downloads and unpacks under the download lock
when the package is not in the cache, and runs the engine's cleanup of the
other ids of the same FullName and version.

    python3 engine.py CACHE_DIR

CACHE_DIR "-" leaves [engine] packages_cache unset: the engine's default,
<tempdir>/murano-packages-cache. With ENGINE_RMTREE_LOG=FILE set, every
package directory the loader deletes (its cleanup, or a package that
does not load) is appended to FILE as "start DIR" before the deletion
and "end DIR" after it.

Commands on stdin, one answer a line on stdout:
  load DEPLOYMENT FULLNAME VERSION ID ZIP
        DEPLOYMENT (made on first use) loads the package ID from the
        catalog; ZIP is what the catalog serves for it, or "-" when the
        catalog must not be asked (the package must come from the cache).
        Answers "loaded DIR" (the package's directory) or "error ...".
  end DEPLOYMENT
        ends the deployment: ApiPackageLoader.cleanup() releases its
        locks. Answers "ended".
  loaddir DIR
        murano.packages.load_utils.load_from_dir(DIR), what the engine
        runs on a cached package. Answers "package FULLNAME VERSION
        CLASS,CLASS..." or "error ...".
  loadclasses DIR
        loaddir, then package_loader.get_class for every class the
        manifest lists, what a deployment runs when it uses the class
        (load_from_dir reads the manifest only: a package whose class
        files are gone passes it). Answers as loaddir.
  arm open|cleanup
        makes the next load stop at one point of the engine's code, to
        let a test act there: "open" right after the shared usage lock's
        first open (murano.utils.SharedInterProcessLock._do_open creates
        the file with O_CREAT|O_EXCL, then opens it again read-only),
        "cleanup" in ApiPackageLoader.try_cleanup_cache holding the
        exclusive usage lock of a stale id, before its shutil.rmtree,
        "unpack" in murano.packages.load_utils.load_from_file halfway
        through extracting the archive into the package directory,
        holding the download lock. The load then answers "paused open
        PATH", "paused cleanup DIR" or "paused unpack DIR" first and
        waits for a line "go" before it goes on. Answers "armed".
"""
import os
import shutil
import sys
import zipfile

import murano.common.config  # noqa: F401 (registers the engine's options)
from oslo_config import cfg

from murano import utils as m_utils
from murano.dsl import helpers
from murano.engine import package_loader
from murano.packages import load_utils

if sys.argv[1] != "-":
    cfg.CONF.set_override("packages_cache", sys.argv[1], group="engine")
cfg.CONF.set_override("enable_packages_cache", True, group="engine")


class Definition:
    """A package as the catalog's API describes it."""

    def __init__(self, fqn, version, package_id):
        self.fully_qualified_name = fqn
        self.version = version
        self.id = package_id
        self.owner_id = "tenant"
        self.is_public = True


class Packages:
    """The stand-in for muranoclient's packages manager: filter answers
    with the one package the next load asks for, download with its zip."""

    def __init__(self):
        self.current = None
        self.zips = {}

    def filter(self, **opts):
        return [self.current]

    def download(self, package_id):
        path = self.zips.get(package_id)
        if path is None:
            raise RuntimeError("the catalog was asked for %s" % package_id)
        with open(path, "rb") as f:
            return f.read()


class Client:
    def __init__(self):
        self.packages = Packages()


class Session:
    project_id = "tenant"


client = Client()


class Loader(package_loader.ApiPackageLoader):
    """ApiPackageLoader, its API client replaced and nothing else."""

    @property
    def client(self):
        return client


armed = set()


def pause(point, what):
    """Stops at point when armed: says so, waits for "go"."""
    if point not in armed:
        return
    armed.discard(point)
    print("paused", point, what, flush=True)
    line = sys.stdin.readline().strip()
    if line != "go":
        raise RuntimeError("paused at %s: got %r, want go" % (point, line))


class OsAt:
    """os for murano.utils, stopping after the usage lock's first open."""

    def __getattr__(self, name):
        return getattr(os, name)

    def open(self, path, flags, *args):
        try:
            return os.open(path, flags, *args)
        finally:
            if os.fsdecode(path).endswith("_usage.lock") and flags & os.O_EXCL:
                pause("open", os.fsdecode(path))


class ShutilAt:
    """shutil for package_loader, stopping before the cleanup's rmtree."""

    def __getattr__(self, name):
        return getattr(shutil, name)

    def rmtree(self, path, *args, **kwargs):
        pause("cleanup", os.fsdecode(path))
        log = os.environ.get("ENGINE_RMTREE_LOG")
        if log:
            with open(log, "a") as f:
                f.write("start " + os.fsdecode(path) + "\n")
        try:
            return shutil.rmtree(path, *args, **kwargs)
        finally:
            if log:
                with open(log, "a") as f:
                    f.write("end " + os.fsdecode(path) + "\n")


class ZipAt:
    """zipfile for load_utils, stopping halfway through extractall."""

    def __getattr__(self, name):
        return getattr(zipfile, name)

    def ZipFile(self, *args, **kwargs):
        z = zipfile.ZipFile(*args, **kwargs)
        extractall = z.extractall

        def halfway(path=None, members=None, pwd=None):
            names = z.namelist()
            half = len(names) // 2
            extractall(path, names[:half], pwd)
            pause("unpack", os.fsdecode(path))
            extractall(path, names[half:], pwd)

        z.extractall = halfway
        return z


m_utils.os = OsAt()
package_loader.shutil = ShutilAt()
load_utils.zipfile = ZipAt()

deployments = {}
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    try:
        if cmd[0] == "load":
            name, fqn, version, package_id, archive = cmd[1:]
            client.packages.current = Definition(fqn, version, package_id)
            if archive == "-":
                client.packages.zips.pop(package_id, None)
            else:
                client.packages.zips[package_id] = archive
            loader = deployments.get(name)
            if loader is None:
                loader = deployments[name] = Loader(Session())
            package = loader.load_package(fqn, helpers.parse_version_spec("=" + version))
            print("loaded", os.path.join(loader._cache_directory, fqn, str(package.version), package_id), flush=True)
        elif cmd[0] == "end":
            deployments.pop(cmd[1]).cleanup()
            print("ended", flush=True)
        elif cmd[0] in ("loaddir", "loadclasses"):
            package = load_utils.load_from_dir(cmd[1])
            if cmd[0] == "loadclasses":
                for name in package.classes:
                    package_loader.get_class(package, name)
            print("package", package.full_name, package.version, ",".join(sorted(package.classes)), flush=True)
        elif cmd[0] == "arm":
            armed.add(cmd[1])
            print("armed", flush=True)
        else:
            print("error unknown command", cmd[0], flush=True)
    except Exception as e:  # the engine's refusal, reported to the test
        print("error", type(e).__name__, str(e).replace("\n", " "), flush=True)
