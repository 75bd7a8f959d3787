import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './App';
import { loadPageInfo } from './lib/config';
import './styles.css';

// What the server says about its agent (title, suggestions, where the API is) first.
void loadPageInfo().then(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
