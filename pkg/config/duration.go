package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// UnmarshalYAML accepts a Go duration string such as "30s" or "5m".
// Anything else yields a *yaml.TypeError naming the line, so decoding of
// the rest of the document continues.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: want a duration such as \"30s\" or \"5m\", got %s", n.Line, kindName(n))}}
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(
			"line %d: invalid duration %q: want e.g. \"30s\" or \"5m\"", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as a Go duration string ("30s").
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// String formats d like time.Duration ("5m0s").
func (d Duration) String() string { return time.Duration(d).String() }
