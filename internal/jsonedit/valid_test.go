package jsonedit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// validInPieces feeds data to a Validator in pieces of n bytes.
func validInPieces(data []byte, n int) bool {
	var v Validator
	for len(data) > 0 {
		k := min(n, len(data))
		if n%2 == 0 {
			v.Write(data[:k])
		} else {
			v.WriteString(string(data[:k]))
		}
		data = data[k:]
	}
	return v.Err() == nil
}

var validatorCases = []string{
	``, ` `, `{}`, `[]`, ` [ ] `, `{"a":1}`, `{"a" : [1, 2.5e-3, -0, true, false, null, "x\u00e9\n"]}`,
	`"\ud83d\ude00"`, `0`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `1E+5`, `-0.0e0`, `2 `, ` 3`,
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1}}`, `[1]]`, `[`, `{`, `"abc`,
	`"a\x"`, `"\u12g4"`, "\"a\tb\"", `tru`, `truex`, `nul`, `null null`, `[1] [2]`, `{"a":[}]}`,
	`["a\\"]`, `"\\\""`, `{"":""}`, `[[[[[]]]]]`, `[{"a":{"b":[{}]}}]`, `1 1`, "\xff",
}

func TestValidatorAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validatorCases {
		want := json.Valid([]byte(c))
		for _, n := range []int{1, 2, 3, 7, 1 << 20} {
			if got := validInPieces([]byte(c), n); got != want {
				t.Errorf("%q in pieces of %d: valid %v, encoding/json says %v", c, n, got, want)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "models", "*.json"))
	if len(files) == 0 {
		t.Fatal("no models in testdata/models")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{len(data), len(data) / 2, len(data) - 1} {
			want := json.Valid(data[:cut])
			if got := validInPieces(data[:cut], 4093); got != want {
				t.Errorf("%s[:%d]: valid %v, encoding/json says %v", f, cut, got, want)
			}
		}
	}
}

func FuzzValidator(f *testing.F) {
	for _, c := range validatorCases {
		f.Add([]byte(c), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 1 {
			n = 1
		}
		if got, want := validInPieces(data, n), json.Valid(data); got != want {
			t.Errorf("%q: valid %v, encoding/json says %v", data, got, want)
		}
	})
}
