package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// OperatorBinary is the cluster-api-operator scripts/build-operator.sh
// built into CacheDir; the test skips (fails with PINSEAL_REQUIRE_PEERS=1)
// when it is not there.
func OperatorBinary(t testing.TB) string {
	t.Helper()
	b := filepath.Join(CacheDir(), "cluster-api-operator")
	if fi, err := os.Stat(b); err != nil || fi.Mode()&0o111 == 0 {
		testpeer.Missing(t, "%s not built: run scripts/build-operator.sh (builds cluster-api-operator into %s; set %s to use another directory)", b, CacheDir(), CacheEnv)
	}
	return b
}

// StartOperator runs the real cluster-api-operator against s as the admin
// user, until the test ends. Its webhooks serve a self-signed certificate
// from a temporary directory on a free 127.0.0.1 port (the API server
// never calls them: no webhook configuration is registered), and its
// health, diagnostics and profiler endpoints are on free ports or off, so
// tests run side by side. Its log is the file it returns.
func (s *APIServer) StartOperator(t testing.TB) (logFile string) {
	t.Helper()
	bin := OperatorBinary(t)
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM := selfSigned(t, "127.0.0.1")
	writeFile(t, filepath.Join(certDir, "tls.crt"), string(certPEM))
	writeFile(t, filepath.Join(certDir, "tls.key"), string(keyPEM))
	ports := make([]string, 3)
	for i := range ports {
		p, err := testpeer.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = strconv.Itoa(p)
	}
	logFile = filepath.Join(dir, "operator.log")
	s.operator = s.start(t, logFile, bin,
		"--kubeconfig", s.Kubeconfig,
		"--webhook-port", ports[0], "--webhook-cert-dir", certDir,
		"--health-addr", "127.0.0.1:"+ports[1],
		"--diagnostics-address", "127.0.0.1:"+ports[2], "--insecure-diagnostics",
		"--profiler-address", "",
		"--leader-elect=false",
	)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("cluster-api-operator log (last lines):\n%s", tail(string(b), 40))
		}
	})
	return logFile
}

// StopOperator kills the operator StartOperator started, leaving the
// world as it left it (nothing reconciles a planted state back); safe
// when none runs.
func (s *APIServer) StopOperator() {
	s.mu.Lock()
	op := s.operator
	s.operator = nil
	for i, p := range s.procs {
		if p == op {
			s.procs = append(s.procs[:i], s.procs[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if op != nil {
		_ = op.Process.Kill()
		_ = op.Wait()
	}
}

// selfSigned returns a PEM certificate and key for the IP host, valid for
// a day: what a webhook server needs to start.
func selfSigned(t testing.TB, host string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(host)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
