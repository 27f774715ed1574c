package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// TokensEnv names the environment variable that may hold bearer tokens,
// comma or newline separated.
const TokensEnv = "PINSEAL_TOKENS"

// minTokenLen keeps guessable tokens out.
const minTokenLen = 16

// tokens are the accepted bearer tokens, kept as SHA-256 digests so that
// comparing them takes the same time whatever the presented token.
type tokens [][sha256.Size]byte

// loadTokens reads the tokens file (if any) and the environment value.
func loadTokens(file, env string) (tokens, error) {
	var raw []string
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("tokens file: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if len(line) < minTokenLen {
				return nil, fmt.Errorf("tokens file %s line %d: token shorter than %d characters", file, n, minTokenLen)
			}
			raw = append(raw, line)
		}
	}
	for _, t := range strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if len(t) < minTokenLen {
			return nil, fmt.Errorf("%s: token shorter than %d characters", TokensEnv, minTokenLen)
		}
		raw = append(raw, t)
	}
	ts := make(tokens, len(raw))
	for i, t := range raw {
		ts[i] = sha256.Sum256([]byte(t))
	}
	return ts, nil
}

// match compares against every token without stopping early.
func (ts tokens) match(presented string) bool {
	h := sha256.Sum256([]byte(presented))
	ok := 0
	for i := range ts {
		ok |= subtle.ConstantTimeCompare(h[:], ts[i][:])
	}
	return ok == 1
}

// requireToken answers 401 without a bearer token and 403 with a wrong one.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		scheme, tok, found := strings.Cut(auth, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pinseal"`)
			s.writeError(w, r, http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer <token>)")
			return
		}
		if !s.tokens.match(strings.TrimSpace(tok)) {
			s.writeError(w, r, http.StatusForbidden, "the bearer token is not accepted")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readAccess lets reads through when they are public, else asks for a token.
func (s *Server) readAccess(next http.Handler) http.Handler {
	if s.cfg.PublicReads {
		return next
	}
	return s.requireToken(next)
}
