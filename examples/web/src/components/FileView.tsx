/**
 * A file part: an image the agent saved (an ADK artifact, served by the chat's artifact
 * route) or the user attached, or a link to any other file.
 *
 * Artifact URLs start with the chat endpoint's path (`/api/chat/{chatId}/artifacts/…`):
 * they are resolved against the endpoint, so the page works when the API is on another
 * origin (`?api=`). `<img>` sends the page's cookies, not headers: an app whose users
 * authenticate with a bearer header fetches the URL itself and shows a blob URL.
 */
import type { FileUIPart } from 'ai';

import { chatApi } from '../lib/config';

/**
 * The name to show: the part's filename, else the name ADK gave the file
 * (`providerMetadata.adk.filename`) or the artifact's name (`providerMetadata.adk.artifact`;
 * ai 5 clients drop both), else the URL's last segment.
 */
export function fileName(part: FileUIPart): string {
  const adk = part.providerMetadata?.adk as { artifact?: unknown; filename?: unknown } | undefined;
  const given = typeof adk?.filename === 'string' ? adk.filename : undefined; // ADK's display_name
  let name = part.filename ?? given ?? (typeof adk?.artifact === 'string' ? adk.artifact : undefined);
  if (name === undefined && !part.url.startsWith('data:')) {
    name = decodeURIComponent(new URL(part.url, location.href).pathname.split('/').pop() ?? '');
  }
  return (name ?? '').replace(/^user:/, '').split('/').pop() || 'file';
}

/** The URL to load: data: and absolute URLs as they are, paths against the endpoint. */
export function fileUrl(url: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return url;
  return new URL(url, new URL(chatApi(), location.href)).toString();
}

export function FileView({ part }: { part: FileUIPart }) {
  const name = fileName(part);
  const url = fileUrl(part.url);
  if (part.mediaType.startsWith('image/')) {
    return (
      <figure className="file-image" data-testid="file" data-media-type={part.mediaType}>
        <a href={url} target="_blank" rel="noreferrer">
          <img src={url} alt={name} />
        </a>
        <figcaption>{name}</figcaption>
      </figure>
    );
  }
  return (
    <a className="file-link" href={url} download={name} data-testid="file" data-media-type={part.mediaType}>
      {name}
    </a>
  );
}
