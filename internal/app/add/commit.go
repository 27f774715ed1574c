package add

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// commit stages the package in a hidden directory beside abs, checks
// it with the verifier's engine and renames it to abs, which must not
// exist: the package appears whole or not at all.
func commit(ctx context.Context, abs string, files []change, res *Result) error {
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".add-")
	if err != nil {
		return fmt.Errorf("staging the package: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already once renamed
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("staging the package: %w", err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return fmt.Errorf("staging the package: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := checkStaged(ctx, tmp, res); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("staging the package: %w", err)
	}
	if err := renameNoReplace(tmp, abs); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w (it appeared while the package was staged)", abs, ErrExists)
		}
		return fmt.Errorf("moving the staged package into place: %w", err)
	}
	syncDir(filepath.Dir(abs))
	return nil
}

// checkStaged runs the verifier's offline checks on the staged package:
// any error finding stops the add.
func checkStaged(ctx context.Context, dir string, res *Result) error {
	opts := verify.Options{}
	opts.Logger = slog.New(slog.DiscardHandler)
	tree, rep, err := verify.Run(ctx, dir, opts)
	if err != nil {
		return fmt.Errorf("checking the staged package: %w", err)
	}
	if len(tree.Packages) != 1 || len(tree.Packages[0].Providers) != 1 || tree.Packages[0].Providers[0].ID() != res.Provider {
		return fmt.Errorf("the staged package does not load as one package of %s", res.Provider)
	}
	var errs []string
	for _, f := range rep.Findings {
		if f.Severity == report.Error {
			errs = append(errs, fmt.Sprintf("%s: %s", f.Check, f.Message))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the staged package fails checks: %s", strings.Join(errs, "; "))
	}
	return nil
}

// syncTree flushes the staged files and directories to disk before the
// rename publishes them.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}

func syncDir(d string) {
	if f, err := os.Open(d); err == nil {
		f.Sync()
		f.Close()
	}
}
