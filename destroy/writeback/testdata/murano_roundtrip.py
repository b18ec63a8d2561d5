"""Murano 14's engine run on models objgc reads and writes.

Used by destroy/writeback's TestMuranoRoundTrip. Reads JSON lines on
stdin, each {"name": NAME, "input": PATH, "written": {CASE: PATH}}: the
model objgc read and the ones its write-back wrote from it, one a case
(envelopes {"Objects", "ObjectsCopy", "Attributes"}, or engine tasks
holding one under "model"). For each model it runs what
murano/common/engine.py TaskExecutor._execute runs on a deployment:
executor.load, object_store.cleanup, then executor.finalize's steps
(serializer.collect_objects, object_store.prepare_finalize,
serializer.serialize_model, object_store.finalize), each step called on
its own so that an exception is seen (finalize would log and swallow it).

The model's classes are not installed anywhere: every object gets a
MuranoPL class made here for it (one per type and property shape), as
Murano's unit tests make theirs, whose property contracts are what objgc
assumes of any model: a nested object or a bare string equal to an id
is an object ($.class(io.murano.Object)), anything else a plain value
($). Objects are retyped to those classes before loading, and the
output is mapped back to the model's own types.

Writes one JSON line per input line: {"name", "input": RUN, "written":
{CASE: RUN}} (or {"name", "unsupported": why} when no class can be made
for a place of the models), where RUN is {"error": null or {"step", "type", "message", "where"},
"loaded_deps": {id: [[subscriber, handler], ...]} (the records the
engine kept at load), "collected": [ids destroyed by cleanup],
"view": VIEW of the serialized model, "own": VIEW of the model file
itself}. VIEW is {"Objects": TREE, "ObjectsCopy": TREE, "Attributes":
rows}, and TREE is null or {"objects": {id: OBJ}, "idless": n}, OBJ
being {"type", "owner", "destroyed", "copies", "deps", "designer",
"props"}: props with every nested object replaced by its id, so that a
copy written in full and a bare reference read alike. A model runs at
most CASE_SECONDS; the names of the models run go to stderr.
"""

import murano.common.config  # noqa: F401  (must precede the engine)

import copy
import gc
import json
import logging
import signal
import sys
import traceback
import weakref

from murano.dsl import constants
from murano.dsl import context_manager
from murano.dsl import executor as dsl_executor
from murano.dsl import murano_package
from murano.dsl import package_loader
from murano.dsl import serializer
from murano.dsl import yaql_expression
from murano.engine import execution_session

logging.disable(logging.CRITICAL)

OBJECT = 'io.murano.Object'
CLASS_CONTRACT = "$.class('io.murano.Object')"


def is_object(v):
    return isinstance(v, dict) and isinstance(v.get('?'), dict)


def walk_objects(v, fn):
    """Calls fn on every object in v, outermost first."""
    if isinstance(v, dict):
        if is_object(v):
            fn(v)
        for k, x in v.items():
            if k != '?':
                walk_objects(x, fn)
    elif isinstance(v, list):
        for x in v:
            walk_objects(x, fn)


# Shapes: what a value at one place holds, over every copy of an object.
# 'obj' (an object or a reference), 'str', 'scalar', 'null', 'list'
# (and the shape of the items), 'dict' (and the shape of each key's
# values).

class Shape(object):
    def __init__(self):
        self.kinds = set()
        self.items = None   # Shape of list items
        self.values = None  # Shape of plain object values, by key
        self.keysets = set()  # the key sets of plain objects seen
        self.ids = set()    # strings seen that are ids
        self.strs = set()   # strings seen that are not

    def add(self, v, ids):
        if v is None:
            self.kinds.add('null')
        elif is_object(v):
            self.kinds.add('obj')
        elif isinstance(v, str):
            if v in ids:
                self.kinds.add('obj')
                self.ids.add(v)
            else:
                self.kinds.add('str')
                self.strs.add(v)
        elif isinstance(v, list):
            self.kinds.add('list')
            if self.items is None:
                self.items = Shape()
            for x in v:
                self.items.add(x, ids)
        elif isinstance(v, dict):
            self.kinds.add('dict')
            if self.values is None:
                self.values = {}
            self.keysets.add(frozenset(v))
            for k, x in v.items():
                self.values.setdefault(k, Shape()).add(x, ids)
        else:
            self.kinds.add('scalar')

    def merge(self, other):
        self.kinds |= other.kinds
        self.ids |= other.ids
        self.strs |= other.strs
        self.keysets |= other.keysets
        if other.items is not None:
            if self.items is None:
                self.items = Shape()
            self.items.merge(other.items)
        for k, x in (other.values or {}).items():
            if self.values is None:
                self.values = {}
            self.values.setdefault(k, Shape()).merge(x)

    def has_obj(self):
        return ('obj' in self.kinds or
                (self.items is not None and self.items.has_obj()) or
                any(x.has_obj() for x in (self.values or {}).values()))

    def contract(self):
        """The contract of this place: a yaql expression, or a list or
        dict of contracts."""
        if not self.has_obj():
            return '$'
        kinds = self.kinds - {'null'}
        if kinds == {'obj'}:
            return CLASS_CONTRACT
        if kinds == {'list'} and 'null' not in self.kinds:
            return [self.items.contract()]
        if (kinds == {'dict'} and 'null' not in self.kinds and
                len(self.keysets) == 1):
            # Always the same keys: a contract per key (a key a contract
            # names and the value lacks would come back null).
            return {k: x.contract() for k, x in self.values.items()}
        if kinds == {'dict'} and 'null' not in self.kinds:
            # Keys that vary: one contract for every value (an expression
            # key keeps the keys as they are).
            merged = Shape()
            for x in self.values.values():
                merged.merge(x)
            return {'$': merged.contract()}
        if kinds <= {'obj', 'str', 'scalar'}:
            # Objects, references and plain values at one place: an
            # object or a known id through class(), the rest as it is.
            # (yaql's and/or are lazy where switch() is not.)
            ids = ', '.join(quote(i) for i in sorted(self.ids))
            return ('(isDict($) or (isString($) and $ in list(%s))) and %s '
                    'or $' % (ids, CLASS_CONTRACT))
        raise Unsupported('objects and %s at one place' % sorted(kinds))


class Unsupported(Exception):
    pass


def quote(s):
    return "'" + s.replace('\\', '\\\\').replace("'", "\\'") + "'"


def contract_key(c):
    return json.dumps(c, sort_keys=True)


def to_spec(c):
    """A contract as the class loader has it: yaql expressions."""
    if isinstance(c, list):
        return [to_spec(x) for x in c]
    if isinstance(c, dict):
        # Literal keys, but for '$', an expression keeping any key.
        return {(to_spec(k) if k == '$' else k): to_spec(v)
                for k, v in c.items()}
    return yaql_expression.YaqlExpression(c, constants.RUNTIME_VERSION_1_0)


class Classes(object):
    """The classes made for a set of models: one per type and shape."""

    def __init__(self, models):
        ids = set()
        for m in models:
            for tree in trees(m):
                walk_objects(tree, lambda o: ids.add(o['?'].get('id')))
        ids.discard(None)
        shapes = {}   # id (or id(obj) when it has none) -> {prop: Shape}
        types = {}    # same key -> the type of its first copy
        handlers = {}  # subscriber id -> the handlers records name
        for m in models:
            for tree in trees(m):
                def add(o):
                    key = o['?'].get('id') or ('idless', id(o))
                    types.setdefault(key, o['?'].get('type'))
                    props = shapes.setdefault(key, {})
                    for k, v in o.items():
                        if k != '?':
                            props.setdefault(k, Shape()).add(v, ids)
                    deps = o['?'].get('dependencies')
                    if isinstance(deps, dict):
                        for r in deps.get('onDestruction') or []:
                            if isinstance(r, dict) and r.get('handler'):
                                handlers.setdefault(
                                    r.get('subscriber'), set()).add(
                                        r['handler'])
                walk_objects(tree, add)
        self.by_key = {}   # (type, contracts) -> class name
        self.of = {}       # object key -> class name
        self.type_of = {}  # class name -> the model's type
        self.defs = []
        for key, props in shapes.items():
            contracts = {}
            for k, s in props.items():
                try:
                    contracts[k] = s.contract()
                except Unsupported as e:
                    raise Unsupported('%s of %s: %s' % (k, key, e))
            methods = sorted(handlers.get(key, ()))
            ck = (types[key], contract_key(contracts), tuple(methods))
            name = self.by_key.get(ck)
            if name is None:
                name = 'objgc.roundtrip.C%d' % len(self.by_key)
                self.by_key[ck] = name
                self.type_of[name] = class_name(types[key])
                self.defs.append({
                    'Name': name,
                    'Properties': {k: {'Contract': to_spec(c)}
                                   for k, c in contracts.items()},
                    # A handler takes the publisher and does nothing.
                    'Methods': {h: {'Arguments': [
                        {'publisher': {'Contract': to_spec('$')}}],
                        'Body': []} for h in methods}})
            self.of[key] = name


def trees(m):
    if not isinstance(m, dict):
        return []
    return [m.get('Objects'), m.get('ObjectsCopy')]


def retyped(classes, model, original):
    """Gives the objects of model (a deep copy of original) their
    classes as types."""

    def pair(a, b):
        if isinstance(a, dict):
            if is_object(a):
                key = b['?'].get('id') or ('idless', id(b))
                a['?']['type'] = classes.of[key]
                a['?'].pop('classVersion', None)
                a['?'].pop('package', None)
            for k in a:
                if k != '?':
                    pair(a[k], b[k])
        elif isinstance(a, list):
            for x, y in zip(a, b):
                pair(x, y)
    for k in ('Objects', 'ObjectsCopy'):
        if isinstance(model, dict) and k in model:
            pair(model[k], original[k])


class Package(murano_package.MuranoPackage):
    def get_resource(self, name):
        return None


class Loader(package_loader.MuranoPackageLoader):
    """Every package name and class name leads to one package: the core
    library, io.murano.Object and the classes made for the models."""

    def __init__(self, classes):
        self._package = Package(self, constants.CORE_LIBRARY, '0.0.0',
                                constants.RUNTIME_VERSION_1_0)
        self._package.register_class([{'Name': OBJECT}], OBJECT)
        for d in classes.defs:
            self._package.register_class([d], d['Name'])
        super(Loader, self).__init__()

    def load_package(self, package_name, version_spec):
        return self._package

    def load_class_package(self, class_name, version_spec):
        return self._package

    def register_package(self, package):
        pass

    def import_fixation_table(self, fixations):
        pass

    def export_fixation_table(self):
        return {}

    def compact_fixation_table(self):
        pass


def error(step, e):
    tb = traceback.extract_tb(e.__traceback__)
    where = ['%s:%s' % (f.filename.split('/murano/', 1)[-1], f.name)
             for f in tb if '/murano/' in f.filename]
    return {'step': step, 'type': type(e).__name__, 'message': str(e),
            'where': where[-3:]}


def loaded(ex, deps_out):
    """Weak references to the objects ex loaded, by id, and each one's
    destruction records as the engine kept them in deps_out. Nothing
    here may hold an object: an orphan held would not be collected."""
    live = {}
    for oid in list(ex.object_store.iterate()):
        o = ex.object_store.get(oid)
        if o is None or o.real_this is not o:
            continue
        live[oid] = weakref.ref(o)
        deps = []
        for r in o.destruction_dependencies or []:
            s = r['subscriber']() if r['subscriber'] else None
            deps.append([s.object_id if s else None, r['handler']])
        deps_out[oid] = deps
    return live


def run_engine(classes, model):
    """TaskExecutor._execute's load, cleanup and finalize on model."""
    out = {'error': None, 'loaded_deps': {}, 'collected': [], 'view': None}
    loader = Loader(classes)
    ex = dsl_executor.MuranoDslExecutor(
        loader, context_manager.ContextManager(),
        execution_session.ExecutionSession())
    try:
        try:
            root = ex.load(model)
        except Exception as e:
            out['error'] = error('load', e)
            return out
        live = loaded(ex, out['loaded_deps'])
        try:
            ex.object_store.cleanup()
        except Exception as e:
            out['error'] = error('cleanup', e)
            return out
        out['collected'] = sorted(
            i for i, w in live.items() if w() is None or w().destroyed)
        live = None
        try:
            step = 'collect_objects'
            used = serializer.collect_objects(root) if root else None
            step = 'prepare_finalize'
            ex.object_store.prepare_finalize(used)
            step = 'serialize_model'
            result = serializer.serialize_model(root, ex) if root else None
            step = 'finalize'
            ex.object_store.finalize()
        except Exception as e:
            out['error'] = error(step, e)
            return out
        if result is None:
            result = {'Objects': None, 'ObjectsCopy': None, 'Attributes': []}
        out['view'] = view(result, classes.type_of)
        return out
    finally:
        try:
            ex.finalize()
        except Exception:
            pass
        gc.collect()


def class_name(t):
    if not isinstance(t, str):
        return t
    return t.split('/', 1)[0].split('@', 1)[0]


def tree_view(tree, type_of):
    if tree is None:
        return None
    objects = {}
    idless = [0]

    def norm(v):
        if is_object(v):
            return v['?'].get('id')
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    def rec(v, owner):
        if isinstance(v, dict):
            if is_object(v):
                h = v['?']
                oid = h.get('id')
                if oid is None:
                    idless[0] += 1
                else:
                    o = objects.get(oid)
                    if o is not None:
                        o['copies'] += 1
                    else:
                        t = class_name(h.get('type'))
                        deps = (h.get('dependencies') or {}).get(
                            'onDestruction') or []
                        objects[oid] = {
                            'type': type_of.get(t, t) if type_of else t,
                            'owner': owner,
                            'destroyed': h.get('destroyed') is True,
                            'copies': 1,
                            'deps': [[d.get('subscriber'), d.get('handler')]
                                     for d in deps],
                            'designer': {k: x for k, x in h.items()
                                         if str(k).startswith('_') and
                                         k != '_actions'},
                            'props': {k: norm(x) for k, x in v.items()
                                      if k != '?'},
                        }
                    owner = oid
                for k, x in v.items():
                    if k != '?':
                        rec(x, owner)
            else:
                for x in v.values():
                    rec(x, owner)
        elif isinstance(v, list):
            for x in v:
                rec(x, owner)

    rec(tree, None)
    return {'objects': objects, 'idless': idless[0]}


def view(model, type_of=None):
    if not isinstance(model, dict):
        return None
    return {'Objects': tree_view(model.get('Objects'), type_of),
            'ObjectsCopy': tree_view(model.get('ObjectsCopy'), type_of),
            'Attributes': model.get('Attributes')}


CASE_SECONDS = 60


class Timeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def run_model(classes, name, m):
    """run_engine on a retyped copy of m, within CASE_SECONDS."""
    sys.stderr.write('%s\n' % name)
    r = copy.deepcopy(m)
    retyped(classes, r, m)
    signal.alarm(CASE_SECONDS)
    try:
        run = run_engine(classes, r)
    except Timeout:
        run = {'error': {'step': 'any', 'type': 'Timeout',
                         'message': 'still running after %d s' % CASE_SECONDS,
                         'where': []}}
    finally:
        signal.alarm(0)
    run['own'] = view(m)
    return run


def read_model(path):
    with open(path, encoding='utf-8') as f:
        m = json.load(f)
    if isinstance(m, dict) and 'Objects' not in m and 'model' in m:
        m = m['model']  # an engine task
    return m


def main():
    signal.signal(signal.SIGALRM, on_alarm)
    # The engine's cleanup runs gc.collect() (object_store._collect_garbage)
    # several times a model; what the imports made is never garbage, and
    # leaving it out of the collector's sight makes each pass fast.
    gc.freeze()
    for line in sys.stdin:
        req = json.loads(line)
        model = read_model(req['input'])
        written = {k: read_model(p) for k, p in req['written'].items()}
        res = {'name': req['name'], 'written': {}}
        try:
            classes = Classes([model] + list(written.values()))
        except Unsupported as e:
            res['unsupported'] = str(e)
        else:
            res['input'] = run_model(classes, req['name'], model)
            for k, m in sorted(written.items()):
                res['written'][k] = run_model(classes, k, m)
        sys.stdout.write(json.dumps(res, sort_keys=True) + '\n')
        sys.stdout.flush()


if __name__ == '__main__':
    main()
