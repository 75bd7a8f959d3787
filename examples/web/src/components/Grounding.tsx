/**
 * What an answer is grounded on: its sources (`source-url`, `source-document` parts) as a
 * numbered list, and the Google Search suggestions of a `data-grounding` part.
 *
 * Google's terms for Grounding with Google Search require the suggestions to be shown with
 * the grounded answer, exactly as rendered (`searchEntryPoint`: Google's HTML and CSS), at
 * least as wide as the answer, a tap going straight to the search results. They are
 * rendered in a sandboxed `<iframe srcdoc>` (no script, no access to the page) whose links
 * open in a new tab.
 */
import type { GroundingData } from 'adk-asgi';
import type { SourceDocumentUIPart, SourceUrlUIPart } from 'ai';

export type SourcePart = SourceUrlUIPart | SourceDocumentUIPart;

export function Sources({ parts }: { parts: SourcePart[] }) {
  if (parts.length === 0) return null;
  return (
    <ol className="sources" data-testid="sources">
      {parts.map(part => (
        <li key={part.sourceId} data-testid="source" data-source-id={part.sourceId}>
          {part.type === 'source-url' ? (
            <a href={part.url} target="_blank" rel="noopener noreferrer">
              {part.title || new URL(part.url).hostname}
            </a>
          ) : (
            <span className="source-document" title={passage(part)}>
              {part.title}
              {part.filename && part.filename !== part.title ? ` (${part.filename})` : ''}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}

function passage(part: SourceDocumentUIPart): string | undefined {
  const text = (part.providerMetadata?.adk as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
}

export function SearchSuggestions({ data }: { data: GroundingData }) {
  if (!data.searchEntryPoint) return null;
  return (
    <iframe
      className="search-suggestions"
      data-testid="search-suggestions"
      title="Google Search suggestions"
      sandbox="allow-popups allow-popups-to-escape-sandbox"
      srcDoc={`<base target="_blank">${data.searchEntryPoint}`}
    />
  );
}
