package input

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kai-minruntime/kai-scheduler/pkg/apis/kai/v1alpha1"
)

// Limits of a Topology's schema (pkg/apis/kai/v1alpha1's kubebuilder markers), which the API
// server enforces before its rules.
const (
	maxTopologyLevels = 16
	maxNodeLabelChars = 317
	maxAliasChars     = 63
)

// checkTopology refuses what the API server refuses of a new Topology: its schema (1 to 16
// levels, each naming a node label of 1 to 317 characters, and optionally an alias of 1 to 63)
// and its validation rules, whose messages it gives with the levels they are about. raw is the
// document as JSON: an alias written empty (refused) decodes as one not written (allowed).
// The first mistake is named, as for every other kind.
func checkTopology(t *v1alpha1.Topology, raw []byte) error {
	if t.Name == "" {
		return errors.New("metadata.name: a Topology needs a name, which a PodGroup's topologyConstraint.topology names")
	}
	var written struct {
		Spec *struct {
			Levels []struct {
				Alias *string `json:"alias"`
			} `json:"levels"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &written); err != nil {
		return decodeError(err) // decoded once already: not expected
	}
	levels := t.Spec.Levels
	switch {
	case written.Spec == nil:
		return fmt.Errorf("spec: required: a Topology's spec.levels name its levels' node labels, widest first (1 to %d levels)", maxTopologyLevels)
	case levels == nil:
		return fmt.Errorf("spec.levels: required: a Topology names its levels' node labels, widest first (1 to %d levels)", maxTopologyLevels)
	case len(levels) == 0:
		return fmt.Errorf("spec.levels: has no levels; a Topology has 1 to %d", maxTopologyLevels)
	case len(levels) > maxTopologyLevels:
		return fmt.Errorf("spec.levels: has %d levels; a Topology has 1 to %d", len(levels), maxTopologyLevels)
	}
	for i, l := range levels {
		field := fmt.Sprintf("spec.levels[%d]", i)
		switch {
		case l.NodeLabel == "":
			return fmt.Errorf("%s.nodeLabel: required: the node label whose value names a node's domain at this level", field)
		case len(l.NodeLabel) > maxNodeLabelChars:
			return fmt.Errorf("%s.nodeLabel: has %d characters, more than %d", field, len(l.NodeLabel), maxNodeLabelChars)
		case written.Spec.Levels[i].Alias != nil && *written.Spec.Levels[i].Alias == "":
			return fmt.Errorf("%s.alias: is empty: name the level, or leave the alias out", field)
		case len(l.Alias) > maxAliasChars:
			return fmt.Errorf("%s.alias: has %d characters, more than %d", field, len(l.Alias), maxAliasChars)
		}
	}
	// The CRD's rules, in its order, with its messages.
	for i, l := range levels {
		for j := range i {
			if levels[j].NodeLabel == l.NodeLabel {
				return fmt.Errorf("spec.levels[%d].nodeLabel: levels must name distinct node labels: %q is also spec.levels[%d]'s", i, l.NodeLabel, j)
			}
		}
	}
	for i, l := range levels {
		for j := range i {
			if l.Alias != "" && levels[j].Alias == l.Alias {
				return fmt.Errorf("spec.levels[%d].alias: levels must have distinct aliases: %q is also spec.levels[%d]'s", i, l.Alias, j)
			}
		}
	}
	for i, l := range levels {
		for j, o := range levels {
			if l.Alias == "" || o.NodeLabel != l.Alias {
				continue
			}
			// The rule holds an alias to every level's node label, its own level's too.
			whose := fmt.Sprintf("spec.levels[%d]'s", j)
			if j == i {
				whose = "this level's own"
			}
			return fmt.Errorf("spec.levels[%d].alias: an alias must not be another level's node label: %q is %s nodeLabel", i, l.Alias, whose)
		}
	}
	for i, l := range levels {
		if l.NodeLabel == v1alpha1.HostnameLabel && i != len(levels)-1 {
			return fmt.Errorf("spec.levels[%d].nodeLabel: %s may only be the last level, here spec.levels[%d] (a host is the narrowest domain)",
				i, v1alpha1.HostnameLabel, len(levels)-1)
		}
	}
	return nil
}
