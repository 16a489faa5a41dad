import { Box } from '@mui/material';
import type { ReactNode } from 'react';

/**
 * A wizard step with an email preview: from lg up (a 960 px panel) the preview sits beside the fields, with Back/Next
 * right under the fields; on a phone the preview comes after the fields and before the buttons, so the
 * buttons close the step instead of the preview.
 */
export function StepLayout({ fields, preview, footer }: { fields: ReactNode; preview: ReactNode; footer: ReactNode }) {
  return (
    <Box
      sx={{
        display: 'grid',
        columnGap: 3,
        alignItems: 'start',
        gridTemplateColumns: { xs: 'minmax(0, 1fr)', lg: 'minmax(0, 1fr) 400px', xl: 'minmax(0, 1fr) 520px' },
        gridTemplateAreas: { xs: '"fields" "preview" "footer"', lg: '"fields preview" "footer preview"' },
      }}
    >
      <Box sx={{ gridArea: 'fields' }}>{fields}</Box>
      {preview && <Box sx={{ gridArea: 'preview', mt: { xs: 3, lg: 2 }, position: { lg: 'sticky' }, top: { lg: 16 } }}>{preview}</Box>}
      <Box sx={{ gridArea: 'footer' }}>{footer}</Box>
    </Box>
  );
}
