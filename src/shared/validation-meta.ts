/**
 * Counterpart of apimachinery's ValidateObjectMeta checks of labels and annotations
 * (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation ValidateLabels, and
 * pkg/api/validation ValidateAnnotations): every object kind's, shared by the Pod's and the
 * ConfigMap's and Secret's validation. Pure.
 */
import { labelValueErrors, qualifiedNameErrors } from './names.js';
import { child, type ErrorList, type Obj } from './validation-util.js';

/** kTotalAnnotationSizeLimitBytes: the most bytes an object's annotations (keys and values) may total (256 KiB, TotalAnnotationSizeLimitB). */
export const kTotalAnnotationSizeLimitBytes = 256 * 1024;

/**
 * validateLabelsAndAnnotations adds to `el` every error of `meta.labels` (string values; keys
 * qualified names, values label values) and `meta.annotations` (string values; keys qualified
 * names, case-insensitively; all together at most kTotalAnnotationSizeLimitBytes), field paths
 * under `path` (`metadata`).
 */
export function validateLabelsAndAnnotations(el: ErrorList, path: string, meta: Obj): void {
  const labelsPath = child(path, 'labels');
  for (const [k, v] of Object.entries(el.strMap(labelsPath, meta.labels) ?? {})) {
    for (const m of qualifiedNameErrors(k)) el.invalid(labelsPath, k, m);
    for (const m of labelValueErrors(v)) el.invalid(labelsPath, v, m);
  }
  const annPath = child(path, 'annotations');
  let total = 0;
  for (const [k, v] of Object.entries(el.strMap(annPath, meta.annotations) ?? {})) {
    for (const m of qualifiedNameErrors(k.toLowerCase())) el.invalid(annPath, k, m);
    total += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (total > kTotalAnnotationSizeLimitBytes) el.tooLong(annPath, `must have at most ${kTotalAnnotationSizeLimitBytes} bytes`);
}
