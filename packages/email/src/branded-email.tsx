import { Body, Button, Container, Head, Heading, Hr, Html, Img, Link, Preview, Section, Text } from '@react-email/components';
import type { EmailModel } from './model.js';

/**
 * The one branded email. Every value is passed as a React child or attribute, so React escapes it;
 * colours and URLs were checked when the model was built. 600 px wide: it fits the 624 px preview frame
 * and common mail clients.
 */
const font = "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
const muted = '#5F6B7A';

export function BrandedEmail({ model }: { model: EmailModel }) {
  const { footer } = model;
  return (
    <Html lang={model.language}>
      <Head>
        <meta name="color-scheme" content="light" />
        <title>{model.subject}</title>
      </Head>
      <Preview>{model.preheader}</Preview>
      <Body style={{ margin: 0, padding: '12px 0', backgroundColor: '#F4F6F8', fontFamily: font }}>
        <Container style={{ width: '100%', maxWidth: '600px', backgroundColor: '#FFFFFF', borderRadius: '8px', overflow: 'hidden' }}>
          <Section style={{ backgroundColor: model.primary, padding: '20px 32px' }}>
            {model.logoSrc ? (
              <Img src={model.logoSrc} alt={model.appName} height="60" style={{ maxHeight: '60px', maxWidth: '240px', height: 'auto', width: 'auto' }} />
            ) : (
              <Text style={{ margin: 0, fontSize: '22px', fontWeight: 700, color: model.onPrimary }}>{model.appName}</Text>
            )}
          </Section>

          <Section style={{ padding: '28px 32px 8px' }}>
            <Heading as="h1" style={{ margin: '0 0 16px', fontSize: '22px', lineHeight: '30px', color: '#111111' }}>
              {model.heading}
            </Heading>
            {model.paragraphs.map((p, i) => (
              <Text key={i} style={{ fontSize: '15px', lineHeight: '24px', color: '#222222', margin: '0 0 14px' }}>
                {p}
              </Text>
            ))}
            {model.code ? (
              <Text
                style={{ fontFamily: 'Menlo, Consolas, monospace', fontSize: '20px', letterSpacing: '3px', textAlign: 'center', padding: '12px', backgroundColor: '#F4F6F8', borderRadius: '6px', margin: '0 0 18px' }}
              >
                {model.code}
              </Text>
            ) : null}
            {model.action ? (
              <Section style={{ textAlign: 'center', padding: '8px 0 20px' }}>
                <Button
                  href={model.action.href}
                  style={{ backgroundColor: model.primary, color: model.onPrimary, fontSize: '15px', fontWeight: 600, padding: '12px 28px', borderRadius: '6px', textDecoration: 'none' }}
                >
                  {model.action.text}
                </Button>
              </Section>
            ) : null}
          </Section>

          {model.cta ? (
            <Section style={{ padding: '0 32px 24px' }}>
              <Hr style={{ borderColor: '#E3E7EB', margin: '0 0 20px' }} />
              <Text style={{ fontSize: '17px', fontWeight: 600, color: '#111111', margin: '0 0 12px', textAlign: 'center' }}>{model.cta.headline}</Text>
              <Section style={{ textAlign: 'center' }}>
                <Button
                  href={model.cta.href}
                  style={{ backgroundColor: model.secondary, color: model.onSecondary, fontSize: '15px', fontWeight: 600, padding: '10px 24px', borderRadius: '6px', textDecoration: 'none' }}
                >
                  {model.cta.text}
                </Button>
              </Section>
            </Section>
          ) : null}

          <Section style={{ backgroundColor: '#F9FAFB', padding: '20px 32px' }}>
            <Text style={{ fontSize: '12px', lineHeight: '18px', color: muted, margin: '0 0 4px' }}>{footer.companyName}</Text>
            {footer.mailingAddress ? (
              <Text style={{ fontSize: '12px', lineHeight: '18px', color: muted, margin: '0 0 8px', whiteSpace: 'pre-line' }}>{footer.mailingAddress}</Text>
            ) : null}
            {footer.privacyHref || footer.supportHref ? (
              <Text style={{ fontSize: '12px', lineHeight: '18px', color: muted, margin: '0 0 8px' }}>
                {footer.privacyHref ? (
                  <Link href={footer.privacyHref} style={{ color: muted, textDecoration: 'underline' }}>
                    {footer.privacyLabel}
                  </Link>
                ) : null}
                {footer.privacyHref && footer.supportHref ? ' · ' : null}
                {footer.supportHref ? (
                  <Link href={footer.supportHref} style={{ color: muted, textDecoration: 'underline' }}>
                    {footer.supportLabel}
                  </Link>
                ) : null}
              </Text>
            ) : null}
            {footer.essentialsLine ? <Text style={{ fontSize: '12px', lineHeight: '18px', color: muted, margin: 0 }}>{footer.essentialsLine}</Text> : null}
          </Section>
        </Container>
      </Body>
    </Html>
  );
}
