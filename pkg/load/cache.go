package load

import (
	"context"
	"sync/atomic"

	"github.com/pinseal/pinseal/internal/snapshot"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// Cache keeps what loading a directory gave (a provider package, a chart
// skipped and why, or nothing) across loads, under a key that covers
// everything that load read and was told (see cacheKey): the bytes,
// types, modes and link targets of every entry under the directory, the
// files its links and the policy's values files lead to, the tree root,
// the options and the user. The implementation keeps the build of the
// program apart (a key means nothing to another build) and must not
// believe bytes it cannot vouch for: Get returns only what Put was given
// under key, else false. Both are called from several goroutines at once.
type Cache interface {
	Get(key [32]byte) ([]byte, bool)
	Put(key [32]byte, data []byte)
}

func init() {
	// The error types the model holds (blob.Info.Err and HeaderErr).
	snapshot.Register(&blob.CorruptError{})
}

// outcome is what Cache keeps of one load.
type outcome struct {
	Package *model.Package // nil: not a provider package
	Skipped bool           // a chart skipped, for Skip
	Skip    string
}

// cacheStats counts what the cache did in one load.
type cacheStats struct {
	recalled, loaded, kept, unkeyed atomic.Int64
}

// cachedLoad is safeLoad through Options.Cache: the outcome kept under
// the candidate's key when there is one, else the load, kept when it
// depended on nothing but its key (no panic, no end of ctx, no answer of
// a render child the machine decided, no file changed while it loaded).
func (l *scanner) cachedLoad(ctx context.Context, c candidate) *model.Package {
	cache := l.opts.Cache
	if cache == nil {
		p, _ := l.safeLoad(ctx, c)
		return p
	}
	k, ok := l.cacheKey(c)
	if !ok {
		l.stats.unkeyed.Add(1)
		p, _ := l.safeLoad(ctx, c)
		return p
	}
	if data, ok := cache.Get(k.sum); ok {
		var o outcome
		err := snapshot.Decode(data, &o)
		if err == nil {
			l.stats.recalled.Add(1)
			if o.Skipped {
				l.skip(c, o.Skip)
			}
			return o.Package
		}
		l.opts.Logger.Debug("a cached package load was not believed", "package", c.rel, "err", err)
	}
	l.stats.loaded.Add(1)
	unsure := l.sandbox.Unsure()
	p, ok := l.safeLoad(ctx, c)
	if !ok || ctx.Err() != nil || l.sandbox.Unsure() != unsure || !k.unchanged() {
		return p
	}
	o := outcome{Package: p}
	o.Skip, o.Skipped = l.skips.reason(c.rel)
	data, err := snapshot.Encode(&o)
	if err != nil {
		l.opts.Logger.Debug("a package load cannot be cached", "package", c.rel, "err", err)
		return p
	}
	cache.Put(k.sum, data)
	l.stats.kept.Add(1)
	return p
}
