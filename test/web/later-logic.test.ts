// The times of "Schedule for later" and "Remind me" (services/web/src/lib/later.ts),
// without a browser: presets on the person's clock, the custom input read in
// their zone, and the API's window (1 minute to 120 days) checked before asking.
import { expect } from 'chai';
import { fromLocalInput, localInputValue, reminderPresets, schedulePresets, timeProblem, whenLabel } from '../../services/web/src/lib/later.js';

/** A local date (the process's zone, as the browser's would be). */
const at = (y: number, m: number, d: number, h = 0, min = 0) => new Date(y, m - 1, d, h, min);

describe('web later: times', () => {
  it('offers tomorrow at 9 and next Monday at 9; on a Monday the Monday a week on; on a Sunday only tomorrow', () => {
    const wednesday = schedulePresets(at(2026, 11, 25, 16, 40));
    expect(wednesday.map((p) => p.at.getTime())).to.deep.equal([at(2026, 11, 26, 9).getTime(), at(2026, 11, 30, 9).getTime()]);
    expect(wednesday.map((p) => p.label)).to.satisfy((labels: string[]) => labels[0]!.startsWith('Tomorrow at 9') && labels[1]!.startsWith('Monday at 9'));
    expect(schedulePresets(at(2026, 11, 30, 8)).map((p) => p.at.getTime())).to.deep.equal([at(2026, 12, 1, 9).getTime(), at(2026, 12, 7, 9).getTime()]);
    expect(schedulePresets(at(2026, 11, 29, 20)).map((p) => p.at.getTime())).to.deep.equal([at(2026, 11, 30, 9).getTime()]);
  });

  it('reminds in 20 minutes, in an hour, or tomorrow at 9 (across a month\'s end)', () => {
    const now = at(2026, 11, 30, 23, 50);
    expect(reminderPresets(now).map((p) => p.at.getTime())).to.deep.equal([now.getTime() + 20 * 60_000, now.getTime() + 3_600_000, at(2026, 12, 1, 9).getTime()]);
  });

  it('reads a datetime-local value in the local zone, and writes one back', () => {
    expect(fromLocalInput('2026-12-03T14:30')?.getTime()).to.equal(at(2026, 12, 3, 14, 30).getTime());
    expect(fromLocalInput('2026-12-03T14:30:15')?.getTime()).to.equal(at(2026, 12, 3, 14, 30).getTime() + 15_000);
    expect(fromLocalInput('')).to.equal(null);
    expect(fromLocalInput('tomorrow')).to.equal(null);
    expect(localInputValue(at(2026, 1, 5, 7, 5))).to.equal('2026-01-05T07:05');
  });

  it('refuses in words what the API would: less than a minute ahead, more than 120 days, nothing', () => {
    const now = at(2026, 11, 25, 12);
    expect(timeProblem(new Date(now.getTime() + 30_000), now)).to.equal('Choose a time at least a minute from now.');
    expect(timeProblem(new Date(now.getTime() + 121 * 86_400_000), now)).to.equal('Choose a time within the next 120 days.');
    expect(timeProblem(null, now)).to.equal('Choose a date and a time.');
    expect(timeProblem(new Date(now.getTime() + 2 * 60_000), now)).to.equal(null);
  });

  it('names today and tomorrow, else the date', () => {
    const now = at(2026, 11, 25, 12);
    expect(whenLabel(at(2026, 11, 25, 18).toISOString(), now)).to.match(/^Today at /);
    expect(whenLabel(at(2026, 11, 26, 9).toISOString(), now)).to.match(/^Tomorrow at 9/);
    expect(whenLabel(at(2026, 11, 28, 9).toISOString(), now)).to.not.match(/^(Today|Tomorrow)/);
  });
});
