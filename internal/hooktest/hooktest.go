// Package hooktest installs hook scripts for the classes and handlers a
// model names, for the tests that run objgc apply on real models (the
// apply scripts of the root package and internal/applytest).
package hooktest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// typeName is the class part of a header's type (before '/' or '@').
var typeName = regexp.MustCompile(`^([a-zA-Z0-9_.]+)`)

// ModelHooks returns, sorted, every class named in model's headers and
// every handler named in their onDestruction records. model must be JSON.
func ModelHooks(model []byte) (classes, handlers []string, err error) {
	var doc any
	if err := json.Unmarshal(model, &doc); err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	cs, hs := map[string]bool{}, map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if h, ok := v["?"].(map[string]any); ok {
				if ty, ok := h["type"].(string); ok {
					if m := typeName.FindStringSubmatch(ty); m != nil {
						cs[m[1]] = true
					}
				}
				if deps, ok := h["dependencies"].(map[string]any); ok {
					recs, _ := deps["onDestruction"].([]any)
					for _, r := range recs {
						if r, ok := r.(map[string]any); ok {
							if name, ok := r["handler"].(string); ok && name != "" {
								hs[name] = true
							}
						}
					}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	for c := range cs {
		classes = append(classes, c)
	}
	for h := range hs {
		handlers = append(handlers, h)
	}
	sort.Strings(classes)
	sort.Strings(handlers)
	return classes, handlers, nil
}

// Install gives every class and handler of model the hook script: the
// files dir/<class>/destroy and dir/<class>/notify/<handler>, mode 0755.
func Install(dir string, model, script []byte) error {
	classes, handlers, err := ModelHooks(model)
	if err != nil {
		return err
	}
	write := func(path string) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, script, 0o755); err != nil {
			return err
		}
		return os.Chmod(path, 0o755) // whatever the umask
	}
	for _, c := range classes {
		if err := write(filepath.Join(dir, c, "destroy")); err != nil {
			return err
		}
		for _, h := range handlers {
			if err := write(filepath.Join(dir, c, "notify", h)); err != nil {
				return err
			}
		}
	}
	return nil
}
