package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ModeState is a mode's own part of a Checkpoint: the members of a JSON
// object (nil when it has none) that only that mode reads and writes.
// Checkpoint's JSON form holds them beside its common members (after
// them; decoding takes members in any order, so a checkpoint stored
// while they were fields of Checkpoint, between "previous" and
// "approval", decodes to the same value).
//
// A ModeState is never changed in place: a mode makes a new one with
// NewModeState, so copies of a checkpoint may share it.
type ModeState []byte

// NewModeState encodes v, a struct whose JSON member names are none of
// Checkpoint's own (all "omitempty", so a zero state is nil), as a
// ModeState.
func NewModeState(v any) (ModeState, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the mode state: %w", err)
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("encode the mode state: %T is not a JSON object", v)
	}
	if len(b) == 2 {
		return nil, nil
	}
	return ModeState(b), nil
}

// Decode decodes s into v; an empty s leaves v as it is.
func (s ModeState) Decode(v any) error {
	if len(s) == 0 {
		return nil
	}
	if err := json.Unmarshal(s, v); err != nil {
		return fmt.Errorf("decode the mode state: %w", err)
	}
	return nil
}

// checkpointFields is Checkpoint without its JSON methods: its common
// members as encoding/json writes them.
type checkpointFields Checkpoint

// commonMember reports whether key is a member Checkpoint's fields
// encode (TestCommonMembersAreCheckpointsTags holds it to the tags).
func commonMember(key string) bool {
	switch key {
	case "step", "phase", "selection", "parameters", "failures", "attempt",
		"feedback", "maxTokens", "previous", "approval", "afterReject":
		return true
	}
	return false
}

// MarshalJSON writes the common members, then the members of c.Mode.
func (c Checkpoint) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal((*checkpointFields)(&c))
	if err != nil || len(c.Mode) <= 2 {
		return b, err
	}
	members := c.Mode[1 : len(c.Mode)-1]
	return append(append(append(b[:len(b)-1:len(b)-1], ','), members...), '}'), nil
}

// UnmarshalJSON reads the common members into c's fields and keeps the
// others, in their order, as c.Mode.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	var f checkpointFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	var mode []byte
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		key, _ := t.(string)
		if commonMember(key) {
			continue
		}
		if mode == nil {
			mode = append(mode, '{')
		} else {
			mode = append(mode, ',')
		}
		k, _ := json.Marshal(key)
		mode = append(append(append(mode, k...), ':'), raw...)
	}
	f.Mode = nil
	if mode != nil {
		f.Mode = append(mode, '}')
	}
	*c = Checkpoint(f)
	return nil
}
