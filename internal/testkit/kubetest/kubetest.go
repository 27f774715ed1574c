// Package kubetest starts a real Kubernetes API server (kube-apiserver
// and etcd, built by scripts/build-kube.sh from the module in
// internal/testkit/kubeapiserver) on 127.0.0.1 for integration tests, and
// writes kubeconfigs for it. No controller runs unless a test starts the
// real cluster-api-operator (StartOperator, built by
// scripts/build-operator.sh); otherwise a test writes what the operator
// would have written.
//
// The binaries are found in $PINSEAL_KUBE_CACHE (default
// ~/.cache/pinseal/kube); when they are missing the test skips, or fails
// with PINSEAL_REQUIRE_PEERS=1.
package kubetest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// CacheEnv names the directory holding kube-apiserver and etcd.
const CacheEnv = "PINSEAL_KUBE_CACHE"

// AdminToken is the token of the user in system:masters (all allowed).
const AdminToken = "pinseal-admin-token"

// LimitedToken is the token of user "limited", who has only what a test
// grants it with RBAC.
const LimitedToken = "pinseal-limited-token"

// CacheDir is where scripts/build-kube.sh puts the binaries.
func CacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "pinseal", "kube")
}

// binaries returns the kube-apiserver and etcd, skipping (or failing) the
// test when they were not built.
func binaries(t testing.TB) (apiserver, etcd string) {
	t.Helper()
	dir := CacheDir()
	apiserver, etcd = filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "etcd")
	for _, b := range []string{apiserver, etcd} {
		if fi, err := os.Stat(b); err != nil || fi.Mode()&0o111 == 0 {
			testpeer.Missing(t, "%s not built: run scripts/build-kube.sh (builds kube-apiserver and etcd into %s; set %s to use another directory)", b, dir, CacheEnv)
		}
	}
	return apiserver, etcd
}

// APIServer is a running kube-apiserver with its etcd.
type APIServer struct {
	URL string // https://127.0.0.1:PORT
	// Kubeconfig is a kubeconfig file for the admin user, context
	// "pinseal-test".
	Kubeconfig string
	// CA is the PEM of the server's self-signed serving certificate.
	CA  []byte
	dir string

	mu    sync.Mutex
	procs []*exec.Cmd
	// operator is the cluster-api-operator StartOperator started.
	operator *exec.Cmd
}

// Context is the name of the context in the kubeconfigs Start writes.
const Context = "pinseal-test"

// Start starts etcd and kube-apiserver on free 127.0.0.1 ports, waits
// until the API server is ready and stops both when the test ends.
func Start(t testing.TB) *APIServer {
	t.Helper()
	apiserver, etcd := binaries(t)
	dir := t.TempDir()
	s := &APIServer{dir: dir}
	t.Cleanup(s.Stop)

	etcdURL := s.startEtcd(t, etcd)
	port, err := testpeer.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "https://127.0.0.1:" + strconv.Itoa(port)
	writeFile(t, filepath.Join(dir, "tokens.csv"), AdminToken+",admin,admin,system:masters\n"+LimitedToken+",limited,limited\n")
	writeSAKeys(t, dir)
	s.start(t, filepath.Join(dir, "apiserver.log"), apiserver,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", "10.96.0.0/24",
		// 127.0.0.1 is refused as an endpoint of the kubernetes Service.
		"--endpoint-reconciler-type", "none",
		"--disable-admission-plugins", "ServiceAccount",
		"--enable-priority-and-fairness=false",
	)
	s.waitReady(t)
	s.Kubeconfig = s.WriteKubeconfig(t, "admin", AdminToken)
	return s
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeSAKeys writes the service-account signing key pair the API server
// needs to start.
func writeSAKeys(t testing.TB, dir string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sa.key"), string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})))
	writeFile(t, filepath.Join(dir, "sa.pub"), string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
}

func (s *APIServer) startEtcd(t testing.TB, etcd string) string {
	t.Helper()
	client, err1 := testpeer.FreePort()
	peer, err2 := testpeer.FreePort()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cu := "http://127.0.0.1:" + strconv.Itoa(client)
	pu := "http://127.0.0.1:" + strconv.Itoa(peer)
	s.start(t, filepath.Join(s.dir, "etcd.log"), etcd,
		"--data-dir", filepath.Join(s.dir, "etcd"),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "default="+pu,
		"--unsafe-no-fsync", "--log-level", "error")
	return cu
}

// start runs a process logging to logFile.
func (s *APIServer) start(t testing.TB, logFile, bin string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, cmd)
	s.mu.Unlock()
	return cmd
}

// waitReady polls /readyz until the API server answers ok (a cold start
// takes about 3 s), then reads its serving certificate.
func (s *APIServer) waitReady(t testing.TB) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+AdminToken)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ca, err := os.ReadFile(filepath.Join(s.dir, "certs", "apiserver.crt"))
				if err != nil {
					t.Fatal(err)
				}
				s.CA = ca
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "apiserver.log"))
	t.Fatalf("kube-apiserver not ready after 60 s (%s); log tail:\n%s", last, tail(string(log), 3000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// WriteKubeconfig writes a kubeconfig for user with token (context
// Context) and returns its path.
func (s *APIServer) WriteKubeconfig(t testing.TB, user, token string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), user+".kubeconfig")
	writeFile(t, p, s.KubeconfigYAML(user, token))
	return p
}

// KubeconfigYAML is the kubeconfig WriteKubeconfig writes.
func (s *APIServer) KubeconfigYAML(user, token string) string {
	ca := base64.StdEncoding.EncodeToString(s.CA)
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: pinseal-test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: %s
  context: {cluster: pinseal-test, user: %s}
current-context: %s
`, s.URL, ca, user, token, Context, user, Context)
}

// Stop kills the API server and etcd (a test of an unreachable cluster
// calls it early); safe to call twice.
func (s *APIServer) Stop() {
	s.mu.Lock()
	procs := s.procs
	s.procs = nil
	s.mu.Unlock()
	// The API server first, then its etcd.
	for i := len(procs) - 1; i >= 0; i-- {
		_ = procs[i].Process.Kill()
		_ = procs[i].Wait()
	}
}
