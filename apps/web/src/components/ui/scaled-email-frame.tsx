import { EMAIL_PREVIEW_HEIGHT_PX, EMAIL_PREVIEW_WIDTH_PX } from '@latchkey/contract';
import { Box } from '@mui/material';
import { useEffect, useRef, useState } from 'react';

/** The share of its 624 px the frame gets where the space is narrower (a phone): 1 when it fits. */
function useFitScale(box: React.RefObject<HTMLElement | null>): number {
  const [scale, setScale] = useState(1);
  useEffect(() => {
    const element = box.current;
    // Every browser has it; jsdom (the unit tests) does not, and there the frame keeps its full size.
    if (!element || typeof ResizeObserver === 'undefined') return;
    // A ResizeObserver reports after layout, so measuring costs no forced layout (docs/performance.md).
    const observer = new ResizeObserver(([entry]) => {
      const width = entry?.contentRect.width ?? EMAIL_PREVIEW_WIDTH_PX;
      setScale(Math.min(1, width / EMAIL_PREVIEW_WIDTH_PX));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [box]);
  return scale;
}

/**
 * An email as it is rendered, in a frame where no script runs. The email is laid out at its real 624 px
 * and scaled down to the space there is, keeping its proportions; the frame is as tall as the email (at
 * most 882 px), so no empty grey hangs below it. `allow-same-origin` only lets this page read the email's
 * height. `title` names both the region and the frame; a new `frameKey` reloads the frame.
 */
export function ScaledEmailFrame({
  title,
  src,
  srcDoc,
  lazy,
  frameKey,
}: {
  title: string;
  src?: string;
  srcDoc?: string;
  lazy?: boolean;
  frameKey?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scale = useFitScale(box);
  const [height, setHeight] = useState(EMAIL_PREVIEW_HEIGHT_PX);
  return (
    <Box role="region" aria-label={title} sx={{ width: '100%', maxWidth: EMAIL_PREVIEW_WIDTH_PX }}>
      {/* Measured inside its border, so the scaled email fits within it to the last pixel. The measured sizes
          are inline styles: in `sx`, each new height or scale is one more class to build and insert. */}
      <Box ref={box} style={{ height: height * scale }} sx={{ overflow: 'hidden', border: 1, borderColor: 'grey.300', borderRadius: 1 }}>
        <Box
          component="iframe"
          key={frameKey}
          title={title}
          sandbox="allow-same-origin"
          loading={lazy ? 'lazy' : undefined}
          src={src}
          srcDoc={srcDoc}
          width={EMAIL_PREVIEW_WIDTH_PX}
          height={height}
          onLoad={(e: React.SyntheticEvent<HTMLIFrameElement>) => {
            // The body's own box: the root's scrollHeight is never less than the frame it fills.
            const body = e.currentTarget.contentDocument?.body;
            if (body) setHeight(Math.min(EMAIL_PREVIEW_HEIGHT_PX, Math.ceil(body.getBoundingClientRect().height)));
          }}
          style={{ height, transform: `scale(${scale})` }}
          sx={{ display: 'block', border: 0, width: EMAIL_PREVIEW_WIDTH_PX, transformOrigin: '0 0' }}
        />
      </Box>
    </Box>
  );
}
