import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ShellProviders } from './app/providers';
import { initialLanguage, setLanguage } from './app/i18n';
import { createRouter } from './app/router';

const router = createRouter();

function render() {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <ShellProviders>
        <RouterProvider router={router} />
      </ShellProviders>
    </StrictMode>,
  );
}

// An English reader's first paint waits for nothing; another language's table loads first, so no page
// flashes in English before it switches.
const language = initialLanguage();
if (language === 'en') render();
else void setLanguage(language).finally(render);
