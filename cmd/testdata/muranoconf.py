"""Prints what murano-engine reads from a murano.conf for its package
cache, through Murano's own option definitions and oslo.config:
python3 muranoconf.py FILE... prints one JSON object a file, one a line:
{"packages_cache": ..., "enable_packages_cache": ...} or {"error": ...}."""
import json
import sys

from oslo_config import cfg

import murano.common.config  # noqa: F401 (registers the engine's options)

for path in sys.argv[1:]:
    try:
        cfg.CONF(["--config-file", path], project="murano",
                 default_config_files=[], default_config_dirs=[])
        print(json.dumps({"packages_cache": cfg.CONF.engine.packages_cache,
                          "enable_packages_cache": cfg.CONF.engine.enable_packages_cache}))
    except Exception as e:  # any refusal of the engine's
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
