/** Posts a page's form as a browser would (urlencoded), without following the redirect that answers it. */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, headers: res.headers, location: res.headers.get('location'), text: await res.text() };
}
