// Recurring jobs (contract section 22): the business's list, a new one (daily or weekly at a time, or
// a raw RRULE; a package template whose windows are offsets from each occurrence), and one job's next
// occurrences with pause, resume, skip and delete.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../shared/api/client';
import { ErrorBox, PageTitle, StatusBadge, formatTime } from '../../shared/ui';
import { Link } from '../router';
import { NewRecurringForm } from './recurring-form';
import { describeRule, keys } from './recurring-shared';

export { RecurringJobPage } from './recurring-detail';
export { describeRule, ruleOf } from './recurring-shared';

export function RecurringJobsPage() {
  const list = useQuery({ queryKey: keys.list, queryFn: () => ok(api.GET('/api/recurring-jobs')) });
  const items = list.data?.items;
  return (
    <>
      <PageTitle>Recurring jobs</PageTitle>
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your recurring jobs</h2>
        <ErrorBox error={list.error} />
        {items?.length === 0 && <p>No recurring jobs yet.</p>}
        {items && items.length > 0 && (
          <table>
            <caption className="sr-only">Recurring jobs</caption>
            <thead>
              <tr>
                <th scope="col">Repeats</th>
                <th scope="col">Time zone</th>
                <th scope="col">Pickup</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((job) => (
                <tr key={job.id}>
                  <td>
                    <Link to={`/recurring/${job.id}`}>{describeRule(job.rule)}</Link>
                  </td>
                  <td>{job.timeZone}</td>
                  <td>{job.template.pickup.address}</td>
                  <td>
                    <StatusBadge status={job.state} />
                  </td>
                  <td>{formatTime(job.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <NewRecurringForm />
    </>
  );
}
