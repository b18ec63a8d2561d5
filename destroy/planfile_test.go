package destroy

import (
	"reflect"
	"testing"

	"github.com/objgc/objgc/destroy/planfile"
)

func TestCompareHooks(t *testing.T) {
	a := planfile.Hook{Event: "destroy", Class: "A", Path: "/h/A/destroy", SHA256: "aaaaaaaaaaaaaaaa"}
	b := planfile.Hook{Event: "destroy", Class: "B", Path: "/h/B/destroy", SHA256: "bbbbbbbbbbbbbbbb"}
	aChanged := a
	aChanged.SHA256 = "cccccccccccccccc"
	aBroken := a
	aBroken.Error = "not executable"
	tests := []struct {
		name         string
		planned, now []planfile.Hook
		want         []string
	}{
		{"same", []planfile.Hook{a, b}, []planfile.Hook{a, b}, nil},
		{"none", nil, nil, nil},
		{"added", []planfile.Hook{a}, []planfile.Hook{a, b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"added to none", nil, []planfile.Hook{b}, []string{"hook /h/B/destroy was added since it was planned"}},
		{"removed", []planfile.Hook{a, b}, []planfile.Hook{b}, []string{"hook /h/A/destroy was removed since it was planned"}},
		{"changed", []planfile.Hook{a}, []planfile.Hook{aChanged}, []string{"hook /h/A/destroy changed since it was planned (sha256 aaaaaaaaaaaa, now cccccccccccc)"}},
		{"cannot run", []planfile.Hook{a}, []planfile.Hook{aBroken}, []string{"hook /h/A/destroy can no longer run (not executable)"}},
		{"can run", []planfile.Hook{aBroken}, []planfile.Hook{a}, []string{"hook /h/A/destroy can run now (when planned: not executable)"}},
		{"reordered", []planfile.Hook{a, b}, []planfile.Hook{b, a}, []string{"hooks /h/A/destroy and /h/B/destroy run in another order than planned"}},
		{"replaced", []planfile.Hook{a}, []planfile.Hook{b}, []string{"hook /h/B/destroy was added since it was planned", "hook /h/A/destroy was removed since it was planned"}},
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
	core := planfile.Package{FullName: "io.murano", Version: "0.0.0", ID: "1111111111111111"}
	coreNew := planfile.Package{FullName: "io.murano", Version: "0.0.0", ID: "2222222222222222"}
	coreOther := planfile.Package{FullName: "io.murano", Version: "1.0.0", ID: "3333333333333333"}
	db := planfile.Package{FullName: "io.murano.databases", Version: "1.0.0", ID: "4444444444444444"}
	tests := []struct {
		name         string
		planned, now []planfile.Package
		want         []string
	}{
		{"same", []planfile.Package{core, db}, []planfile.Package{core, db}, nil},
		{"replaced", []planfile.Package{core, db}, []planfile.Package{coreNew, db}, []string{"package io.murano 0.0.0 was replaced (id 111111111111, now 222222222222)"}},
		{"gone", []planfile.Package{core, db}, []planfile.Package{db}, []string{"package io.murano 0.0.0 (id 111111111111) is no longer in the cache"}},
		{"new", []planfile.Package{db}, []planfile.Package{core, db}, []string{"package io.murano 0.0.0 (id 111111111111) is used now and was not when planned"}},
		{"another version", []planfile.Package{core}, []planfile.Package{coreOther}, []string{
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
