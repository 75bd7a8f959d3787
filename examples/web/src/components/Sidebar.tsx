/** The user's chats: new, switch, export as an ADK eval case, delete; newest first, a page
 * at a time. */
import type { ChatSummary } from '../lib/chats';

export function Sidebar({
  chats,
  current,
  more,
  onNew,
  onOpen,
  onDelete,
  onMore,
  evalSetHref,
}: {
  chats: ChatSummary[];
  current: string;
  more: boolean;
  onNew: () => void;
  onOpen: (id: string) => void;
  onDelete: (id: string) => void;
  onMore: () => void;
  /** Where the chat's eval set downloads from. */
  evalSetHref: (id: string) => string;
}) {
  return (
    <nav className="sidebar" aria-label="Chats">
      <button className="btn btn-send new-chat" onClick={onNew}>
        New chat
      </button>
      <ul className="chat-list" data-testid="chats">
        {chats.map(chat => (
          <li
            key={chat.id}
            className={chat.id === current ? 'chat-item active' : 'chat-item'}
            data-testid="chat"
            data-chat={chat.id}
          >
            <button
              className="chat-open"
              title={new Date(chat.updatedAt).toLocaleString()}
              aria-current={chat.id === current ? 'page' : undefined}
              onClick={() => onOpen(chat.id)}
            >
              {chat.title ?? 'Untitled chat'}
            </button>
            <a
              className="chat-export"
              href={evalSetHref(chat.id)}
              download
              title="Export as eval case"
              aria-label={`Export ${chat.title ?? 'chat'} as eval case`}
              data-testid="export-eval"
            >
              ⤓
            </a>
            <button
              className="chat-delete"
              aria-label={`Delete ${chat.title ?? 'chat'}`}
              onClick={() => onDelete(chat.id)}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      {more && (
        <button className="link more" onClick={onMore}>
          More chats
        </button>
      )}
    </nav>
  );
}
