package render

import (
	"context"
	"fmt"
	"io"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// markProvider is the Helm client provider of the render child. A lookup of
// api is a template's start mark: it writes the template's name, quoted, to
// w.
// Every lookup (a chart's own too) finds nothing, exactly as Helm's engine
// without a cluster answers: an empty map.
type markProvider struct {
	api string
	seq uint64
	w   io.Writer
}

func (p markProvider) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion == p.api {
		fmt.Fprintf(p.w, "%s%d %s\n", progressPrefix, p.seq, strconv.Quote(kind))
	}
	return notFound{}, false, nil
}

// notFound answers Get and List with NotFound, which Helm's lookup turns
// into an empty map. Helm's lookup calls nothing else; any other method
// panics on the nil embedded interface, and Helm's render recovers that.
type notFound struct {
	dynamic.NamespaceableResourceInterface
}

var notFoundErr = apierrors.NewNotFound(schema.GroupResource{Group: "pinseal.render", Resource: "none"}, "")

func (notFound) Namespace(string) dynamic.ResourceInterface { return notFound{} }

func (notFound) Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, notFoundErr
}

func (notFound) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, notFoundErr
}
