import { Box, Link, Typography } from '@mui/material';
import type { FormEventHandler, ReactNode } from 'react';
import { Link as RouterLink } from 'react-router';

interface Props {
  /** The heading's id: the page's form (or block) is labelled by it. */
  titleId: string;
  title: string;
  /** A page that asks for something is one form submitting here; without it the frame is a plain block. */
  onSubmit?: FormEventHandler<HTMLFormElement>;
  /** The centred link below the content (back to sign-in, on to the portal), after an optional lead-in text. */
  link?: { to: string; label: string; lead?: string };
  children: ReactNode;
}

/**
 * The frame of a signed-out account page inside the auth layout: its heading, its content and a link
 * below. /login keeps its own markup so that this module stays out of the sign-in page's first load.
 */
export function AuthPageFrame({ titleId, title, onSubmit, link, children }: Props) {
  return (
    <Box
      component={onSubmit ? 'form' : 'div'}
      noValidate={onSubmit ? true : undefined}
      onSubmit={onSubmit}
      aria-labelledby={titleId}
    >
      <Typography id={titleId} variant="h2" component="h2" sx={{ fontSize: '1.125rem', mb: 1 }}>
        {title}
      </Typography>
      {children}
      {link && (
        <Typography sx={{ mt: 2, textAlign: 'center' }}>
          {link.lead && `${link.lead} `}
          <Link component={RouterLink} to={link.to}>
            {link.label}
          </Link>
        </Typography>
      )}
    </Box>
  );
}
