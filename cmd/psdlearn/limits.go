package main

import (
	"fmt"
	"sort"
)

// checkNonNegative rejects negative values of integer flags whose zero
// selects a default: a negative limit is a usage error, never replaced by the
// default silently. flags maps flag names (without dashes) to their values.
func checkNonNegative(cmd string, flags map[string]int) error {
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if v := flags[n]; v < 0 {
			return fmt.Errorf("%s: --%s %d: want a positive value, or 0 for the default", cmd, n, v)
		}
	}
	return nil
}
