// Settings → Import from Slack (owners, level 3; docs/migrating-from-slack.md):
// upload the ZIP of Slack's "Export data", follow the import while the worker
// runs it (its counts grow), then read its report: what was added, what an
// earlier run had already brought, Slack's system messages left out, notes,
// and every item skipped with its reason. Loaded lazily by settings.tsx.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../lib/api.js';
import { COUNT_LABELS, getImport, isDone, lastImportId, startSlackImport, type Import } from '../lib/imports.js';
import { useClient } from './context.js';

/** How often the counts are asked for while the import runs. */
const POLL_MS = 1_500;
/** Skipped items shown before "and N more" (an export can skip thousands). */
const SHOWN_SKIPPED = 200;

export function SlackImport() {
  const client = useClient();
  const [file, setFile] = useState<File | null>(null);
  const [uploading, setUploading] = useState<number | null>(null);
  const [current, setCurrent] = useState<Import | null>(null);
  const [error, setError] = useState<string | null>(null);

  // The last import from this browser, if any, shown again.
  useEffect(() => {
    const id = lastImportId(client.storage);
    if (id) getImport(client, id).then(setCurrent, () => undefined);
  }, []);

  // While it runs, its counts are asked for again and again; the answer says when it is done.
  const running = current !== null && !isDone(current);
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => getImport(client, current.id).then(setCurrent, (err) => setError(errorMessage(err))), POLL_MS);
    return () => clearTimeout(timer);
  }, [current, running]);

  const start = async (e: Event) => {
    e.preventDefault();
    if (!file) return setError('Choose the ZIP file of your Slack export.');
    setError(null);
    setUploading(0);
    const form = e.currentTarget as HTMLFormElement;
    try {
      setCurrent(await startSlackImport(client, file, setUploading));
      setFile(null);
      form.reset();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setUploading(null);
    }
  };

  return (
    <>
      <h2>Import from Slack</h2>
      <p class="muted">
        In Slack, an owner or admin exports the workspace (Settings → Import/Export Data → Export) and downloads the ZIP. Upload it here: people, channels, direct messages, threads,
        reactions, pins and files come along. Importing the same export again adds nothing new; a later export adds only what is new.
      </p>
      <form class="row import-form" onSubmit={(e) => void start(e)}>
        <label>
          Slack export (ZIP)
          <input type="file" accept=".zip,application/zip" disabled={uploading !== null || running} onChange={(e) => (setFile(e.currentTarget.files?.[0] ?? null), setError(null))} />
        </label>
        <button class="btn btn-primary" type="submit" disabled={!file || uploading !== null || running}>
          Start import
        </button>
      </form>
      {uploading !== null ? (
        <div class="upload">
          <span>Uploading {Math.round(uploading * 100)}%</span>
          <progress max={1} value={uploading} aria-label="Uploading the export" />
        </div>
      ) : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {current ? <ImportState current={current} /> : null}
    </>
  );
}

function statusText(i: Import) {
  switch (i.status) {
    case 'queued':
      return 'Waiting for the worker to start the import…';
    case 'running':
      return 'Importing… the counts grow as it goes.';
    case 'finished':
      return `Import finished${i.finished_at ? ` at ${new Date(i.finished_at).toLocaleString()}` : ''}.`;
    default:
      return 'The import failed; nothing more was written.';
  }
}

function ImportState({ current }: { current: Import }) {
  const report = current.report;
  const systemMessages = Object.entries(report?.system_messages ?? {});
  return (
    <section class="import-state" aria-label="Import">
      <h3>{current.status === 'finished' ? 'Report' : current.status === 'failed' ? 'Import failed' : 'Progress'}</h3>
      <p role="status" class={current.status === 'failed' ? 'error' : ''}>
        {statusText(current)}
        {current.error ? ` ${current.error}` : ''}
      </p>
      {!isDone(current) ? <progress aria-label="Import in progress" /> : null}
      <dl class="import-counts" aria-label={current.status === 'finished' ? 'Added' : 'Added so far'}>
        {COUNT_LABELS.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd>{current.counts[key].toLocaleString()}</dd>
          </div>
        ))}
      </dl>
      {report ? (
        <>
          {report.already_imported.users || report.already_imported.conversations || report.already_imported.messages ? (
            <p>
              Already imported by an earlier run, left as they were: {report.already_imported.users} people, {report.already_imported.conversations} conversations,{' '}
              {report.already_imported.messages} messages.
            </p>
          ) : null}
          {systemMessages.length ? (
            <>
              <h4>Slack system messages not imported</h4>
              <p class="muted">Joins, topic changes and the like: membership and settings come from the export's lists instead.</p>
              <ul class="import-list">
                {systemMessages.map(([subtype, n]) => (
                  <li key={subtype}>
                    <code>{subtype}</code>: {n}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {report.notes.length ? (
            <>
              <h4>Notes</h4>
              <ul class="import-list">
                {report.notes.map((n, i) => (
                  <li key={i}>{n}</li>
                ))}
              </ul>
            </>
          ) : null}
          <h4>Skipped ({report.skipped.length})</h4>
          {report.skipped.length ? (
            <ul class="import-list skipped">
              {report.skipped.slice(0, SHOWN_SKIPPED).map((s, i) => (
                <li key={i}>
                  <code>{s.item}</code>: {s.reason}
                </li>
              ))}
              {report.skipped.length > SHOWN_SKIPPED ? <li class="muted">and {report.skipped.length - SHOWN_SKIPPED} more</li> : null}
            </ul>
          ) : (
            <p class="muted">Nothing was skipped.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
