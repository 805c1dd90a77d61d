// Delete with confirmation: a modal <dialog> names the pod and its grace period; only "Delete"
// sends `DELETE /pods/{ns}/{name}` (graceful, as kubectl delete pod) with the bearer token. A 401
// shows the token prompt (the user signs in and deletes again); other refusals (403 for a
// read-only token, 404 for a static pod's file-backed source) show the Status message.
import { $, podPath } from './dom.js';
import { api } from './session.js';

/** confirmDelete opens the dialog for `pod` and resolves true when the user chose Delete. */
export function confirmDelete(pod) {
  const dialog = $('confirm-dialog');
  const ns = pod.metadata.namespace ?? 'default';
  $('confirm-name').textContent = `${ns}/${pod.metadata.name}`;
  const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
  $('confirm-grace').textContent = `Its containers get ${grace} s (terminationGracePeriodSeconds) to stop.`;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'delete'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

/**
 * deletePod: after the confirmation, `DELETE /pods/{ns}/{name}`; `button` (the row's or the
 * panel's Delete) shows the outcome: `Deleting…`, `Sign in to delete` or `Refused (code)`.
 */
export async function deletePod(pod, button) {
  if (!(await confirmDelete(pod))) return;
  button.disabled = true;
  try {
    const res = await api(podPath(pod), { method: 'DELETE' });
    if (res.ok) {
      button.textContent = 'Deleting…';
      return;
    }
    const status = await res.json().catch(() => ({}));
    button.title = status.message ?? `${res.status}`;
    button.textContent = res.status === 401 ? 'Sign in to delete' : `Refused (${res.status})`;
  } catch {
    button.textContent = 'Agent unreachable';
  } finally {
    button.disabled = false;
  }
}
