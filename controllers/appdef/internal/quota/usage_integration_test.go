package quota

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cozyplane/cozyplane/pkg/manager"
	cozyschema "github.com/cozyplane/cozyplane/pkg/schema"
	"github.com/cozyplane/cozyplane/pkg/testenv"
)

// TestUsageTheQuotaControllerCannotCount runs the reconciler against a real
// API server, where no kube-controller-manager counts anything: exactly the
// state of a kind its discovery has not found yet. The status the quota
// controller writes then (the limit in status.hard, no usage beside it)
// makes the API server refuse every create of the kind; the reconciler
// counts the instances itself, after which the API server's ResourceQuota
// admission admits creates up to the limit and refuses the next one.
func TestUsageTheQuotaControllerCannotCount(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	crd := testenv.NamespacedCRD(Group, "v1alpha1", apiextensionsv1.CustomResourceDefinitionNames{
		Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"}, nil, false)
	crd.Labels = map[string]string{cozyschema.LabelDefinition: "widgets"}
	env, err := testenv.Start(crd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
		testenv.Check(t, add(scheme))
	}
	k8s, err := client.New(env.Config, client.Options{Scheme: scheme})
	testenv.Check(t, err)
	opts := manager.NewOptions("cozystack-appdef")
	opts.MetricsAddr, opts.ProbeAddr = "0", "0"
	mgr, err := manager.NewWithConfig(opts, env.Config, scheme, CacheOptions())
	testenv.Check(t, err)
	r := &Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), FieldManager: "cozystack-appdef",
		Recorder: mgr.GetEventRecorder("cozystack-appdef"),
		Config:   Config{Instances: 2, Tenants: 1, KindDelay: time.Millisecond},
	}
	testenv.Check(t, r.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = mgr.Start(ctx) }()
	defer func() { cancel(); wg.Wait() }()

	const ns = "tenant-usage"
	testenv.Check(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	res := ResourceName("widgets")
	q := &corev1.ResourceQuota{}
	key := types.NamespacedName{Namespace: ns, Name: Name}
	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		if err := k8s.Get(ctx, key, q); err != nil {
			return false, err.Error(), nil
		}
		n, ok := q.Spec.Hard[res]
		return ok && n.Value() == 2, "spec.hard " + describe(q.Spec.Hard), nil
	})

	widget := func(name string) error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(Group + "/v1alpha1")
		u.SetKind("Widget")
		u.SetNamespace(ns)
		u.SetName(name)
		return k8s.Create(ctx, u)
	}
	// Before any status, the API server enforces nothing: one widget.
	testenv.Check(t, widget("a"))

	// What the quota controller writes for a kind it cannot count yet.
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard.DeepCopy(), Used: corev1.ResourceList{}}
	if err := k8s.Status().Update(ctx, q); err != nil {
		t.Fatalf("writing the quota controller's status: %v", err)
	}

	testenv.Eventually(t, 30*time.Second, func() (bool, string, error) {
		if err := k8s.Get(ctx, key, q); err != nil {
			return false, "", err
		}
		_, ok := q.Status.Used[res]
		return ok, "status.used " + describe(q.Status.Used), nil
	})
	if got := q.Status.Used[res]; got.Cmp(resource.MustParse("1")) != 0 {
		t.Fatalf("usage of %s = %s, want 1 (the widget created before)", res, got.String())
	}
	// The API server admits up to the limit, then refuses with the quota's message.
	testenv.Check(t, widget("b"))
	if err := widget("c"); err == nil || !strings.Contains(err.Error(), "exceeded quota: "+Name) {
		t.Fatalf("a third widget with a limit of 2: %v, want the quota's refusal", err)
	}
}
