#!/usr/bin/env python3
"""Builds the model pairs in this folder from the real models in ../models.

Each output is a Murano envelope {"Objects": incoming, "ObjectsCopy":
snapshot, "Attributes": []} (or an engine task holding one). Run from this
folder: python3 make_pairs.py. The outputs are committed; this script says
how each was made.
"""
import copy
import json


def load(name):
    with open("../models/" + name) as f:
        return json.load(f)


def write(name, snapshot, incoming, task=False):
    env = {"Objects": incoming, "ObjectsCopy": snapshot, "Attributes": []}
    doc = {"action": {"method": "deploy", "object_id": (incoming or snapshot)["?"]["id"]}, "model": env} if task else env
    with open(name, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


quick = load("congress_quick-env-2_deployment-description_Objects.json")

# An app removed: MySQL and PetClinic (which references MySQL) removed.
inc = copy.deepcopy(quick)
inc["services"] = [s for s in inc["services"] if s["name"] not in ("MySqlDB", "PetClinic")]
write("app-removed.json", quick, inc)

# A reference left dangling: MySQL removed, PetClinic still references it.
inc = copy.deepcopy(quick)
inc["services"] = [s for s in inc["services"] if s["name"] != "MySqlDB"]
write("dangling-reference.json", quick, inc)

# A move with nothing removed: PetClinic moved from services to a new
# property, Tomcat's instance moved under PetClinic.
inc = copy.deepcopy(quick)
pet = [s for s in inc["services"] if s["name"] == "PetClinic"][0]
tomcat = [s for s in inc["services"] if s["name"] == "Tomcat"][0]
inc["services"].remove(pet)
pet["server"] = tomcat.pop("instance")
inc["featured"] = {"apps": [pet]}
write("app-moved.json", quick, inc)

# An environment deleted: Objects null (Murano's form for a deleted env).
wordpress = load("wordpress.json")
write("environment-deleted.json", wordpress, None)

# An app removed whose owned objects survive as full copies elsewhere:
# WordPress (applications[4]) holds copies of MySql, Apache and Zabbix.
inc = copy.deepcopy(wordpress)
del inc["applications"][4]
write("wordpress-app-removed.json", wordpress, inc)

# A region removed: RegionTwo and its network (which subscribes the region
# to its destruction with a null handler).
regions = load("environments-model-response.json")
inc = copy.deepcopy(regions)
del inc["regions"]["RegionTwo"]
write("region-removed.json", regions, inc)
# The same, as an engine task.
write("task-region-removed.json", regions, inc, task=True)

# The same with handlers (derived: handler names added): the environment
# subscribes to RegionTwo's destruction with a handler, and the network's
# record names one.
snap = copy.deepcopy(regions)
net = snap["regions"]["RegionTwo"]["defaultNetworks"]["environment"]
net["?"]["dependencies"]["onDestruction"][0]["handler"] = "onNetworkDestroyed"
snap["regions"]["RegionTwo"]["?"]["dependencies"] = {"onDestruction": [
    {"subscriber": snap["?"]["id"], "handler": "onRegionRemoved"}]}
inc = copy.deepcopy(snap)
del inc["regions"]["RegionTwo"]
write("region-removed-handlers.json", snap, inc)
