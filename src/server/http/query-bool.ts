// Counterpart of k8s.io/apimachinery/pkg/runtime/conversion.go (the query string's booleans).
/**
 * queryBool reads a boolean query parameter as the apiserver decodes its options from a query
 * (k8s.io/apimachinery/pkg/runtime/conversion.go Convert_Slice_string_To_bool, used for
 * ListOptions' `watch` and `allowWatchBookmarks`, PodLogOptions' `follow`, … and by the
 * authorizer's request info): absent, `false` or `0` (any case) is false; any other value —
 * `true`, the Python client's `True`, `1`, and also an empty value — is true. Only the first value counts.
 */
export function queryBool(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null) return false;
  const lower = v.toLowerCase();
  return lower !== 'false' && lower !== '0';
}
