package journal

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestTransitionEveryPair(t *testing.T) {
	legal := map[[2]State]bool{
		{StateAlive, StateDoomed}:         true,
		{StateDoomed, StateNotified}:      true,
		{StateNotified, StateDestroying}:  true,
		{StateDestroying, StateDestroyed}: true,
		{StateDestroying, StateFailed}:    true,
		{StateDestroyed, stateRemoved}:    true,
		{StateFailed, StateDoomed}:        true,
	}
	states := append(States(), "", "bogus")
	n := 0
	for _, from := range states {
		for _, to := range states {
			err := transition(from, to)
			if legal[[2]State{from, to}] {
				n++
				if err != nil {
					t.Errorf("transition(%q, %q) = %v, want nil", from, to, err)
				}
				continue
			}
			var te *transitionError
			if !errors.As(err, &te) {
				t.Errorf("transition(%q, %q) = %v, want *transitionError", from, to, err)
				continue
			}
			if te.From != from || te.To != to || te.ID != "" {
				t.Errorf("transition(%q, %q) = %+v", from, to, te)
			}
		}
	}
	if n != len(legal) {
		t.Fatalf("tested %d legal transitions, want %d", n, len(legal))
	}
}

func TestTransitionNeverBackToAlive(t *testing.T) {
	for _, s := range States() {
		if transition(s, StateAlive) == nil {
			t.Errorf("%s -> alive is legal", s)
		}
	}
}

func TestTransitionErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *transitionError
		want string
	}{
		{&transitionError{From: StateDoomed, To: StateDestroying}, "illegal state transition doomed -> destroying"},
		{&transitionError{ID: "abc", From: stateRemoved, To: StateAlive}, "object abc: illegal state transition removed -> alive"},
		{&transitionError{ID: "abc", From: "zombie", To: StateAlive}, `object abc: unknown state "zombie"`},
		{&transitionError{From: StateAlive, To: ""}, `unknown state ""`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestStatesValid(t *testing.T) {
	seen := map[State]bool{}
	for _, s := range States() {
		if !s.valid() || seen[s] || strings.ToLower(string(s)) != string(s) {
			t.Errorf("state %q", s)
		}
		seen[s] = true
	}
	if len(seen) != 7 || State("Alive").valid() {
		t.Error(fmt.Sprint(seen))
	}
}
