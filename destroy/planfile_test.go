package destroy

import (
	"reflect"
	"strings"
	"testing"
)

func TestCompareHooks(t *testing.T) {
	a := PlanHook{Event: "destroy", Class: "A", Path: "/h/A/destroy", SHA256: "aaaaaaaaaaaaaaaa"}
	b := PlanHook{Event: "destroy", Class: "B", Path: "/h/B/destroy", SHA256: "bbbbbbbbbbbbbbbb"}
	aChanged := a
	aChanged.SHA256 = "cccccccccccccccc"
	aBroken := a
	aBroken.Error = "not executable"
	tests := []struct {
		name         string
		planned, now []PlanHook
		want         []string
	}{
		{"same", []PlanHook{a, b}, []PlanHook{a, b}, nil},
		{"none", nil, nil, nil},
		{"added", []PlanHook{a}, []PlanHook{a, b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"added to none", nil, []PlanHook{b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"removed", []PlanHook{a, b}, []PlanHook{b}, []string{"hook /h/A/destroy was removed since it was planned"}},
		{"changed", []PlanHook{a}, []PlanHook{aChanged}, []string{"hook /h/A/destroy changed since it was planned (sha256 aaaaaaaaaaaa, now cccccccccccc)"}},
		{"cannot run", []PlanHook{a}, []PlanHook{aBroken}, []string{"hook /h/A/destroy can no longer run (not executable)"}},
		{"can run", []PlanHook{aBroken}, []PlanHook{a}, []string{"hook /h/A/destroy can run now (when planned: not executable)"}},
		{"reordered", []PlanHook{a, b}, []PlanHook{b, a}, []string{"hooks /h/A/destroy and /h/B/destroy run in another order than planned"}},
		{"replaced", []PlanHook{a}, []PlanHook{b}, []string{"hook /h/B/destroy was added since it was planned", "hook /h/A/destroy was removed since it was planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareHooks(tt.planned, tt.now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("compareHooks = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestComparePackages(t *testing.T) {
	core := PlanPackage{FullName: "io.murano", Version: "0.0.0", ID: "1111111111111111"}
	coreNew := PlanPackage{FullName: "io.murano", Version: "0.0.0", ID: "2222222222222222"}
	coreOther := PlanPackage{FullName: "io.murano", Version: "1.0.0", ID: "3333333333333333"}
	db := PlanPackage{FullName: "io.murano.databases", Version: "1.0.0", ID: "4444444444444444"}
	tests := []struct {
		name         string
		planned, now []PlanPackage
		want         []string
	}{
		{"same", []PlanPackage{core, db}, []PlanPackage{core, db}, nil},
		{"replaced", []PlanPackage{core, db}, []PlanPackage{coreNew, db}, []string{"package io.murano 0.0.0 was replaced (id 111111111111, now 222222222222)"}},
		{"gone", []PlanPackage{core, db}, []PlanPackage{db}, []string{"package io.murano 0.0.0 (id 111111111111) is no longer in the cache"}},
		{"new", []PlanPackage{db}, []PlanPackage{core, db}, []string{"package io.murano 0.0.0 (id 111111111111) is used now and was not when planned"}},
		{"another version", []PlanPackage{core}, []PlanPackage{coreOther}, []string{
			"package io.murano 0.0.0 (id 111111111111) is no longer in the cache",
			"package io.murano 1.0.0 (id 333333333333) is used now and was not when planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := comparePackages(tt.planned, tt.now); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("comparePackages = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestParsePlanFileTellsModels checks that a model is told from a saved
// plan by its first key, without a lookup through the rest (a model's
// trees may be hundreds of megabytes: here a tree that is not even JSON
// past its start must not be read), and that a plan whose keys were
// reordered (jq -S) is still a plan.
func TestParsePlanFileTellsModels(t *testing.T) {
	for _, first := range []string{"Objects", "ObjectsCopy", "Attributes", "model", "?"} {
		data := []byte("{\n  \"" + first + "\": {\"?\": {\"id\": \"a\"}, \"x\": [[[ not json")
		if sp, err := ParsePlanFile("m.json", data); sp != nil || err != nil {
			t.Errorf("%s: %v, %v", first, sp, err)
		}
	}
	sorted := []byte(`{"cache_dir": "", "format_version": "0", "inputs": []}`)
	if _, err := ParsePlanFile("p.json", sorted); err == nil || !strings.Contains(err.Error(), "format_version") {
		t.Errorf("a plan with reordered keys was not read as a plan: %v", err)
	}
}
