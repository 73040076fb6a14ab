package cli

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// version is the CLI's version, stamped by the release build
// (-ldflags "-X .../internal/cli.version=X.Y.Z"; make release); "dev" for
// any other build.
var version = "dev"

// partOfSelector selects the Deployments of cozyplane's controller charts.
const partOfSelector = "app.kubernetes.io/part-of=cozyplane"

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// ClientVersion is the CLI's own version.
type ClientVersion struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// ControllerVersion is what one controller Deployment of the cluster runs.
type ControllerVersion struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Component string `json:"component"`
	// Version is the Deployment's app.kubernetes.io/version label (the
	// chart's appVersion), else its image's tag; "unknown" when neither says.
	Version string `json:"version"`
	Image   string `json:"image"`
	Ready   string `json:"ready"`
}

// Versions is what `cozyplane version` prints.
type Versions struct {
	Client      ClientVersion       `json:"client"`
	Controllers []ControllerVersion `json:"controllers,omitempty"`
	// Error says why the controllers' versions are missing.
	Error string `json:"error,omitempty"`
}

func newVersionCommand(root *Root) *cobra.Command {
	return newVersionCommandWith(root, root.Kube.Dynamic)
}

func newVersionCommandWith(root *Root, client func() (dynamic.Interface, error)) *cobra.Command {
	var output string
	var clientOnly bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the CLI's version and the versions of the controllers the cluster runs",
		Long: `version prints the CLI's version ("dev" for a build that make release did
not stamp) and, unless --client is given, the version each cozyplane controller
Deployment of the cluster runs: its app.kubernetes.io/version label (the chart's
appVersion), else its image's tag. Deployments are found by the label
` + partOfSelector + ` in every namespace, or in -n/--namespace.

It exits 1 when the cluster cannot be read; the client's version is printed
first all the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			v := Versions{Client: ClientVersion{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}}
			var readErr error
			if !clientOnly {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				defer cancel()
				v.Controllers, readErr = readControllerVersions(ctx, root, client)
				if readErr != nil {
					v.Error = readErr.Error()
				}
			}
			if output != OutputText {
				if err := writeStructured(root.Streams.Out, output, v); err != nil {
					return err
				}
			} else {
				writeVersions(root, v, clientOnly)
			}
			if readErr != nil {
				return fmt.Errorf("reading the controllers' versions: %w", readErr)
			}
			return nil
		},
	}
	bindOutput(cmd.Flags(), &output)
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print the CLI's version only; do not contact the cluster.")
	cmd.Flags().DurationVar(&timeout, "request-timeout", 15*time.Second, "How long to wait for the cluster.")
	return cmd
}

func readControllerVersions(ctx context.Context, root *Root, client func() (dynamic.Interface, error)) ([]ControllerVersion, error) {
	c, err := client()
	if err != nil {
		return nil, err
	}
	ns, set, err := root.Kube.Namespace()
	if err != nil {
		return nil, err
	}
	if !set {
		ns = metav1.NamespaceAll
	}
	list, err := c.Resource(deploymentsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: partOfSelector})
	if err != nil {
		return nil, err
	}
	return controllerVersions(list.Items), nil
}

// controllerVersions is what each Deployment runs, by namespace and name.
func controllerVersions(deployments []unstructured.Unstructured) []ControllerVersion {
	out := make([]ControllerVersion, 0, len(deployments))
	for _, d := range deployments {
		labels := d.GetLabels()
		cv := ControllerVersion{Namespace: d.GetNamespace(), Name: d.GetName(), Component: labels["app.kubernetes.io/component"]}
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		for i, c := range containers {
			m, _ := c.(map[string]any)
			if name, _ := m["name"].(string); name == "manager" || i == 0 && cv.Image == "" {
				cv.Image, _ = m["image"].(string)
			}
		}
		cv.Version = labels["app.kubernetes.io/version"]
		if cv.Version == "" {
			cv.Version = imageTag(cv.Image)
		}
		if cv.Version == "" {
			cv.Version = "unknown"
		}
		want, found, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		cv.Ready = fmt.Sprintf("%d/%d", ready, want)
		out = append(out, cv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// imageTag is the tag of an image reference (repository[:tag][@digest]), or "".
func imageTag(image string) string {
	image, _, _ = strings.Cut(image, "@")
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

func writeVersions(root *Root, v Versions, clientOnly bool) {
	w := root.Streams.Out
	fmt.Fprintf(w, "Client: %s (%s, %s)\n", v.Client.Version, v.Client.GoVersion, v.Client.Platform)
	switch {
	case clientOnly:
	case v.Error != "":
		fmt.Fprintln(w, "Controllers: unknown (the cluster could not be read)")
	case len(v.Controllers) == 0:
		fmt.Fprintf(w, "Controllers: none found (no Deployment labelled %s)\n", partOfSelector)
	default:
		fmt.Fprintln(w, "Controllers:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAMESPACE\tNAME\tCOMPONENT\tVERSION\tREADY\tIMAGE")
		for _, c := range v.Controllers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.Namespace, c.Name, c.Component, c.Version, c.Ready, c.Image)
		}
		tw.Flush()
	}
}
