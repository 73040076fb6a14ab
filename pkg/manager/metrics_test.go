package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// With --metrics-secure the metrics are served over HTTPS to a caller whose
// bearer token the API server authenticates and allows get on /metrics (the
// charts' metrics-reader ClusterRole); anyone else is refused.
func TestSecureMetrics(t *testing.T) {
	env := apiServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kc, err := kubernetes.NewForConfig(env.Config)
	testenv.Check(t, err)

	const ns = "metrics-auth"
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	testenv.Check(t, err)
	token := func(sa string) string {
		_, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		testenv.Check(t, err)
		tr, err := kc.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		testenv.Check(t, err)
		return tr.Status.Token
	}
	reader, stranger := token("reader"), token("stranger")
	_, err = kc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	testenv.Check(t, err)
	_, err = kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}},
	}, metav1.CreateOptions{})
	testenv.Check(t, err)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	testenv.Check(t, err)
	addr := l.Addr().String()
	testenv.Check(t, l.Close())
	o := NewOptions("metrics-test")
	o.MetricsAddr, o.ProbeAddr, o.MetricsSecure = addr, "0", true
	mgr, err := NewWithConfig(o, env.Config, runtime.NewScheme())
	testenv.Check(t, err)
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() { stop(); <-done }()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(scheme, token string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s/metrics", scheme, addr), nil)
		if err != nil {
			return 0, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	testenv.Eventually(t, time.Minute, func() (bool, string, error) {
		code, err := get("https", reader)
		if err != nil {
			return false, err.Error(), nil
		}
		return code == http.StatusOK, fmt.Sprintf("the reader got %d", code), nil
	})
	for _, tt := range []struct {
		who, scheme, token string
		want               int
	}{
		{"no token", "https", "", http.StatusUnauthorized},
		// The TokenReview of a malformed token answers with an error, which
		// controller-runtime's filter turns into 500 "Authentication failed".
		{"an invalid token", "https", "not-a-token", http.StatusInternalServerError},
		{"a ServiceAccount without the metrics-reader role", "https", stranger, http.StatusForbidden},
		{"the reader", "https", reader, http.StatusOK},
	} {
		code, err := get(tt.scheme, tt.token)
		if err != nil {
			t.Errorf("%s: %v", tt.who, err)
		} else if code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.who, code, tt.want)
		}
	}
	// Plain HTTP gets no answer from the TLS endpoint.
	if code, err := get("http", reader); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP got the metrics")
	}
}
