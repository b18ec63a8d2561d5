package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/objgc/objgc/internal/testuser"
)

// hookUserModel is a model whose one doomed object, vm1, is of a class of
// Murano's core library io.murano, whose ancestor io.murano.resources.Instance
// gets the destroy hook in packageWithHook.
const hookUserModel = `{"Objects": {"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": []},
 "ObjectsCopy": {"?": {"id": "env", "type": "io.murano.Environment@io.murano"}, "apps": [
  {"?": {"id": "vm1", "type": "io.murano.resources.LinuxMuranoInstance@io.murano"}}]},
 "Attributes": []}`

// packageWithHook copies io.murano to dir/lib with the destroy hook
// script for io.murano.resources.Instance, and returns lib.
func packageWithHook(t *testing.T, dir, script string) string {
	t.Helper()
	lib := filepath.Join(dir, "lib")
	if err := os.CopyFS(lib, os.DirFS(filepath.Join("pkgcache", "testdata", "packages", "io.murano"))); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(lib, "hooks", "io.murano.resources.Instance")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "destroy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return lib
}

// userCache makes an empty cache root at dir/cache that belongs to uid.
func userCache(t *testing.T, dir string, uid, gid int) string {
	t.Helper()
	cache := filepath.Join(dir, "cache")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cache, uid, gid); err != nil {
		t.Fatal(err)
	}
	return cache
}

// hookUserSetup adds io.murano with the destroy hook script (see
// packageWithHook) to a cache in base that belongs to uid and gid, as
// root's cache add, and writes hookUserModel beside it: it returns the
// cache and the model.
func hookUserSetup(t *testing.T, base, script string, uid, gid int) (cache, model string) {
	t.Helper()
	lib := packageWithHook(t, base, script)
	cache = userCache(t, base, uid, gid)
	if code, o := runObjgc(t, 0, "cache", "add", "--cache-dir", cache, lib); code != 0 {
		t.Fatalf("cache add: exit %d\n%s", code, o)
	}
	model = filepath.Join(base, "model.json")
	if err := os.WriteFile(model, []byte(hookUserModel), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache, model
}

// Root's apply runs the destroy hook of a package added with cache add to
// another user's cache as that user (uid, primary group and
// supplementary groups), never as root: the owner can rewrite the hook
// and the record that vouches for it, so the hook may do what the owner
// could do alone and nothing more. Its attempt to write a file only root
// may write fails; a hooks dir's hook still runs as root. plan says whom
// the package's hook runs as, in text, Markdown and JSON.
func TestRootRunsPackageHookAsCacheOwner(t *testing.T) {
	name, uid, gid := testuser.Throwaway(t, "root's apply running a package hook as the cache's owner")
	base := openTempDir(t)
	out := filepath.Join(base, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, uid, gid); err != nil {
		t.Fatal(err)
	}
	rootOnly := filepath.Join(base, "rootonly")
	if err := os.WriteFile(rootOnly, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"id -u > " + out + "/uid\n" +
		"id -G > " + out + "/groups\n" +
		"grep -qxF -- \"$OBJGC_OBJECT_ID\" \"$OBJGC_DOOMED\" && echo yes > " + out + "/doomed\n" +
		"if echo owned >> " + rootOnly + " 2>/dev/null; then echo wrote; else echo refused; fi > " + out + "/rootonly\n" +
		"exit 0\n"
	cache, model := hookUserSetup(t, base, script, uid, gid)

	code, o := runObjgc(t, 0, "plan", "--detailed-exitcode", "--cache-dir", cache, model)
	if code != 2 || !strings.Contains(o, "/hooks/io.murano.resources.Instance/destroy (runs as "+name+")") {
		t.Errorf("plan: exit %d, want 2 and the hook running as %s\n%s", code, name, o)
	}
	code, o = runObjgc(t, 0, "plan", "--format", "markdown", "--cache-dir", cache, model)
	if code != 0 || !strings.Contains(o, "/destroy ` (runs as "+name+")") {
		t.Errorf("plan --format markdown: exit %d, want the hook running as %s\n%s", code, name, o)
	}
	code, o = runObjgc(t, 0, "plan", "--format", "json", "--cache-dir", cache, model)
	var plan struct {
		Groups []struct {
			Objects []struct {
				ID    string
				Hooks []struct {
					Path  string
					RunAs string `json:"run_as"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(o), &plan); code != 0 || err != nil || len(plan.Groups) != 1 ||
		len(plan.Groups[0].Objects) != 1 || len(plan.Groups[0].Objects[0].Hooks) != 1 || plan.Groups[0].Objects[0].Hooks[0].RunAs != name {
		t.Errorf("plan --format json: exit %d, %v; want one hook with run_as %q\n%s", code, err, name, o)
	}

	// A hooks dir's hook is root's to change: it still runs as root.
	dirHook := filepath.Join(base, "hooks", "io.murano.resources.LinuxMuranoInstance")
	if err := os.MkdirAll(dirHook, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirHook, "destroy"), []byte("#!/bin/sh\nid -u > "+out+"/diruid\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	code, o = runObjgc(t, 0, "apply", "--cache-dir", cache, "--hooks-dir", filepath.Join(base, "hooks"), model)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, o)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Errorf("the hook did not write %s: %v\n%s", f, err, o)
		}
		return strings.TrimSpace(string(b))
	}
	if got := read("uid"); got != strconv.Itoa(uid) {
		t.Errorf("the hook ran as uid %s, want %s's %d", got, name, uid)
	}
	groups := strings.Fields(read("groups"))
	if !slices.Contains(groups, strconv.Itoa(gid)) || slices.Contains(groups, "0") {
		t.Errorf("the hook's groups are %v, want %s's group %d and not root's", groups, name, gid)
	}
	if got := read("doomed"); got != "yes" {
		t.Errorf("the hook could not read OBJGC_DOOMED: %q", got)
	}
	if got := read("diruid"); got != "0" {
		t.Errorf("the hooks dir's hook ran as uid %s, want root's", got)
	}
	if got := read("rootonly"); got != "refused" {
		t.Errorf("the hook's write to a file only root may write: %q, want refused", got)
	}
	if b, _ := os.ReadFile(rootOnly); string(b) != "root's\n" {
		t.Errorf("%s was changed by the hook: %q", rootOnly, b)
	}
}

// When the cache's owner has no entry in the user database, root cannot
// tell which groups the owner's hook would run with: plan warns
// (hook_cannot_run) and apply refuses before anything runs, naming the
// cache and the way out.
func TestRootRefusesPackageHookOfUnknownOwner(t *testing.T) {
	_, _, _ = testuser.Throwaway(t, "root's apply on a cache whose owner is not in the user database")
	const uid = 3999917 // no such user
	if _, err := exec.Command("getent", "passwd", strconv.Itoa(uid)).Output(); err == nil {
		t.Skipf("uid %d exists here", uid)
	}
	base := openTempDir(t)
	marker := filepath.Join(base, "ran")
	cache, model := hookUserSetup(t, base, "#!/bin/sh\ntouch "+marker+"\n", uid, uid)
	code, o := runObjgc(t, 0, "plan", "--detailed-exitcode", "--cache-dir", cache, model)
	if code != 1 || !strings.Contains(o, "hook_cannot_run") || !strings.Contains(o, "belongs to uid "+strconv.Itoa(uid)) {
		t.Errorf("plan: exit %d, want 1 and a hook_cannot_run warning\n%s", code, o)
	}
	code, o = runObjgc(t, 0, "apply", "--cache-dir", cache, model)
	if code != 1 || !strings.Contains(o, cache) || !strings.Contains(o, "--hooks-dir") || !strings.Contains(o, "no hook was run") {
		t.Errorf("apply: exit %d, want 1 naming the cache and --hooks-dir\n%s", code, o)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the hook ran")
	}
}
