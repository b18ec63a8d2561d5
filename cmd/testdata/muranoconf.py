"""Prints the package cache directory murano-engine resolves from a
murano.conf, through Murano's own code: murano.common.config.parse_args
(oslo.config, called as the engine calls it, with the default config
directories oslo.config finds) and ApiPackageLoader._get_cache_directory
(tempfile.gettempdir() for the default).

Reads a JSON list of jobs on stdin, each {"path": FILE, "etc": DIR,
"env": {NAME: VALUE}}: FILE is given as Debian's murano-engine.service
gives it (--config-file), env replaces HOME, TMPDIR, TEMP, TMP, SNAP and
SNAP_COMMON, and oslo.config's search of /etc is moved to DIR (its
search of ~ follows HOME). Prints one JSON object a job, one a line:
{"packages_cache": DIR, "enable_packages_cache": BOOL} or {"error": ...}.
"""
import json
import os
import sys
import tempfile

from oslo_config import cfg

import murano.common.config as config  # registers the engine's options
from murano.engine import package_loader

# The engine's prog, from which oslo.config names its default config
# directories (murano-engine.conf.d).
sys.argv[0] = "/usr/bin/murano-engine"

_get_config_dirs = cfg._get_config_dirs


def main():
    jobs = json.load(sys.stdin)
    # _get_cache_directory creates the directory; here it only names it.
    package_loader.fileutils.ensure_tree = lambda path: None
    for job in jobs:
        etc = job["etc"]

        def config_dirs(project=None, etc=etc):
            out = []
            for d in _get_config_dirs(project):
                if d == "/etc" or d.startswith("/etc/"):
                    d = etc + d[len("/etc"):]
                out.append(d)
            return out

        cfg._get_config_dirs = config_dirs
        for name in ("HOME", "TMPDIR", "TEMP", "TMP", "SNAP", "SNAP_COMMON"):
            os.environ.pop(name, None)
        os.environ.update(job["env"])
        tempfile.tempdir = None  # gettempdir() looks again
        cfg.CONF.clear()  # parse_args registers its options once more
        try:
            config.parse_args(["--config-file", job["path"]])
            enabled = cfg.CONF.engine.enable_packages_cache
            d = package_loader.ApiPackageLoader._get_cache_directory()
            if not enabled:
                d = os.path.dirname(d)  # without the deployment's own uuid
            print(json.dumps({"packages_cache": d,
                              "enable_packages_cache": enabled}))
        except Exception as e:  # any refusal of the engine's
            print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
        sys.stdout.flush()


main()
