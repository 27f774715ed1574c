package main

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// outputFormat parses --output.
func outputFormat(output string) (report.Format, error) {
	format, err := report.ParseFormat(output)
	if err != nil {
		return format, usageError{Err: fmt.Errorf("--output: %w", err)}
	}
	return format, nil
}

// loadPolicy reads --policy; without it the built-in policy applies.
func loadPolicy(file string) (*policy.Policy, error) {
	if file == "" {
		return policy.Default(), nil
	}
	pol, err := policy.Load(file)
	if err != nil {
		return nil, usageError{Err: err}
	}
	return pol, nil
}

// outputAndPolicy parses --output, then loads --policy.
func outputAndPolicy(output, policyFile string) (report.Format, *policy.Policy, error) {
	format, err := outputFormat(output)
	if err != nil {
		return format, nil, err
	}
	pol, err := loadPolicy(policyFile)
	return format, pol, err
}
