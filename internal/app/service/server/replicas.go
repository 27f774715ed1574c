package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/pinseal/pinseal/internal/app/service/scan"
	"github.com/pinseal/pinseal/internal/app/service/store"
)

// ReplicaEnv names this replica in leases and scan records (the Helm chart
// sets it to the pod name); default HOSTNAME-PID.
const ReplicaEnv = "PINSEAL_REPLICA"

// openStore opens the configured database: the SQLite file in dataDir, or
// PostgreSQL, whose sources this process shares with other replicas through
// leases (the returned LeaseOptions; nil for SQLite).
func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (*store.Store, *scan.LeaseOptions, error) {
	if cfg.Database == "" {
		st, err := store.Open(ctx, cfg.DataDir)
		return st, nil, err
	}
	pw, err := readSecret(cfg.DatabasePasswordFile, DatabasePasswordEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("databasePasswordFile: %w", err)
	}
	st, err := store.OpenPostgres(ctx, cfg.Database, pw)
	if err != nil {
		return nil, nil, err
	}
	lease := &scan.LeaseOptions{
		Holder:        replicaName(),
		TTL:           cfg.Replicas.LeaseTTL.D(),
		MaxConcurrent: cfg.Replicas.MaxConcurrentScans,
	}
	log.Info("sharing sources with other replicas through PostgreSQL", "replica", lease.Holder)
	return st, lease, nil
}

func replicaName() string {
	if n := os.Getenv(ReplicaEnv); n != "" {
		return n
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "replica"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}
