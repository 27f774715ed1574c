package cli

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/pkg/report"
)

func TestAddHints(t *testing.T) {
	errA, errB := errors.New("a happened"), errors.New("b happened")
	hints := []Hint{{errA, "pass --a"}, {errB, "pass --b"}}
	for _, tt := range []struct {
		name  string
		err   error
		want  string
		usage bool
	}{
		{"none", nil, "", false},
		{"no sentinel", errors.New("other"), "other", false},
		{"wrapped sentinel", fmt.Errorf("ctx: %w", errA), "ctx: a happened; pass --a", false},
		{"usage error keeps its exit code", UsageError{fmt.Errorf("x: %w", errB)}, "x: b happened; pass --b", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return tt.err }}
			root := AddHints(NewRoot("tool", "t", sub), hints...)
			root.SetArgs([]string{"sub"})
			err := root.Execute()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			var ue UsageError
			if errors.As(err, &ue) != tt.usage {
				t.Fatalf("usage error %v, want %v", !tt.usage, tt.usage)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatal("the hinted error does not unwrap to the library's")
			}
		})
	}
}

// TestSettingNames: a command names a setting by its flag only when it has
// that flag.
func TestSettingNames(t *testing.T) {
	cmd := &cobra.Command{Use: "check"}
	cmd.Flags().Int64("max-inflate", 0, "")
	cmd.Flags().StringArray("key", nil, "")
	got := SettingNames(cmd, map[report.Setting]SettingFlag{
		report.SettingInflateLimit:  {Flag: "max-inflate"},
		report.SettingTrustedKeys:   {Flag: "key", Name: "--key or the policy's keys"},
		report.SettingAllowRegistry: {Flag: "allow-registry"},
	})
	want := map[report.Setting]string{report.SettingInflateLimit: "--max-inflate", report.SettingTrustedKeys: "--key or the policy's keys"}
	if !maps.Equal(got, want) {
		t.Errorf("SettingNames = %q, want %q", got, want)
	}
}
